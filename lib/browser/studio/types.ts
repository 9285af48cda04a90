/** Settings and shared shapes of the Studio. */

/** One collection as the shell lists it. */
export interface StudioCollection {
  name: string
  label: string
  icon: string
  description: string
  creatable: boolean
  orderable: boolean
  deletable: boolean
  singletonId: string | null
}

/** What the server embeds in `#cms-studio-config`. */
export interface StudioConfig {
  apiBasePath: string
  mountPath: string
  authMode: 'password' | 'provider'
  loginUrl: string | null
  collections: StudioCollection[]
}

/** Moves to another Studio URL without reloading. */
export type Navigate = (to: string) => void

/**
 * The text to show of an entry: a title-like field, else its id.
 * @param id entry id
 * @param data its data
 * @returns the title
 */
export function entryTitle (id: string, data: Record<string, unknown> | undefined): string {
  for (const k of ['title', 'name', 'label']) {
    const v = data?.[k]
    if (typeof v === 'string' && v.trim() !== '') return v
  }
  return id
}
