/**
 * The attributes a site's HTML binds content with: `data-cms="<collection>/<id>#<field.path>"`,
 * `data-cms-md="<collection>/<id>#<blockPath>"` and `data-cms-src="<start>:<end>:<hash>"`.
 */

/** Where an element's content is stored. */
export interface Binding {
  collection: string
  id: string
  /** The field path (`data-cms`) or block path (`data-cms-md`). */
  path: string
}

/** A parsed `data-cms-src` hint. */
export interface SourceHint {
  start: number
  end: number
  hash: string
}

/**
 * Parses `<collection>/<id>#<path>`.
 * @param value the attribute value
 * @returns the binding, or null when malformed
 */
export function parseBinding (value: string | undefined): Binding | null {
  const m = /^([a-z0-9][a-z0-9_-]{0,63})\/([A-Za-z0-9][A-Za-z0-9_-]{0,127})#(.+)$/.exec(value ?? '')
  if (m === null) return null
  return { collection: m[1]!, id: m[2]!, path: m[3]! }
}

/**
 * Parses `<start>:<end>:<hash>`.
 * @param value the attribute value
 * @returns the hint, or null when malformed
 */
export function parseHint (value: string | undefined): SourceHint | null {
  const m = /^(\d+):(\d+):([0-9a-f]{16})$/.exec(value ?? '')
  if (m === null) return null
  return { start: Number(m[1]), end: Number(m[2]), hash: m[3]! }
}

/**
 * Formats a hint back into its attribute value.
 * @param hint the hint
 * @returns `<start>:<end>:<hash>`
 */
export function formatHint (hint: SourceHint): string {
  return `${hint.start}:${hint.end}:${hint.hash}`
}

/**
 * The source hash of a body slice as the server computes it (first 16 hex characters of the SHA-256
 * of its UTF-8 bytes). Web Crypto exists only in secure contexts (https, localhost).
 * @param text the slice
 * @returns the hash, or null when Web Crypto is not available
 */
export async function sourceHash (text: string): Promise<string | null> {
  const subtle = globalThis.crypto?.subtle
  if (subtle === undefined) return null
  const digest = await subtle.digest('SHA-256', new TextEncoder().encode(text))
  return Array.from(new Uint8Array(digest).slice(0, 8), b => b.toString(16).padStart(2, '0')).join('')
}
