/** An entry's title fields (`titleField`, then `title`, `name`, `label`): what lists show and what `q` ranks first. */
import type { EntryData } from './formats.js'

/** The fields that title an entry when its collection names none. */
export const TITLE_FIELDS: readonly string[] = ['title', 'name', 'label']

/** The entry's title values, in priority order. */
export function titlesOf (data: EntryData | undefined, titleField: string | null): string[] {
  if (data === undefined) return []
  const fields = titleField !== null ? [titleField, ...TITLE_FIELDS] : TITLE_FIELDS
  return fields.map(f => Object.hasOwn(data, f) ? data[f] : undefined).filter((v): v is string => typeof v === 'string')
}

/** Whether a top-level key is one of the title fields. */
export function isTitleKey (key: string, titleField: string | null): boolean {
  return key === titleField || TITLE_FIELDS.includes(key)
}
