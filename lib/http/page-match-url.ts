/**
 * A collection's `url` pattern (`/posts/{slug}/`): the address the generator gives each entry, so
 * `serve --proxy`/`--site` can tell which entry a page shows. Placeholders: `{id}`, `{slug}` (the field,
 * else the id's last segment without a Jekyll date), `{year}`/`{month}`/`{day}` (the `date` field, else
 * the id's date prefix); an `_index`/`index` id stands for its folder. Pure: imports nothing.
 */

const PLACEHOLDER = /\{(id|slug|year|month|day)\}/g
const DATE_PREFIX = /^(\d{4})-(\d{2})-(\d{2})(?:-|$)/
const DATE_VALUE = /^(\d{4})-(\d{2})-(\d{2})/
const INDEX_NAMES = new Set(['_index', 'index'])

/** The address of an entry under a collection's `url` pattern (`/posts/{slug}/`), or null when a placeholder has no value. */
export function entryUrl (pattern: string, id: string, fields: Readonly<Record<string, unknown>> = {}): string | null {
  const segments = id.split('/')
  const last = segments[segments.length - 1] ?? id
  const isIndex = INDEX_NAMES.has(last)
  const folderId = isIndex ? segments.slice(0, -1).join('/') : id
  const date = dateOf(fields.date) ?? DATE_PREFIX.exec(last)
  const slugField = typeof fields.slug === 'string' && fields.slug !== '' ? fields.slug : null
  const values: Record<string, string | null> = {
    id: encodePath(folderId),
    slug: encodePath(slugField ?? (isIndex ? '' : last.replace(DATE_PREFIX, ''))),
    year: date?.[1] ?? null,
    month: date?.[2] ?? null,
    day: date?.[3] ?? null
  }
  if (Array.from(pattern.matchAll(PLACEHOLDER)).some(m => values[m[1]!] === null)) return null
  // An empty placeholder (a section's own page) leaves `//`: the folder's address.
  return pattern.replace(PLACEHOLDER, (_m, name: string) => values[name] ?? '').replace(/\/{2,}/g, '/')
}

/**
 * Whether a request path can be an address of the pattern at all (a quick test before entries are looked at): the
 * pattern's fixed parts in order, each at its first place after the one before (a lookahead, never retried: linear).
 */
export function mayMatchUrl (pattern: string, requestPath: string): boolean {
  const parts = pattern.split(PLACEHOLDER).filter((_p, i) => i % 2 === 0).map(p => p.replace(/\/+$/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  return new RegExp(`^${parts[0]!}${parts.slice(1).map((p, i) => `(?=(.*?${p}))\\${i + 1}`).join('')}`, 'i').test(normalizeUrlPath(requestPath) + '/')
}

/**
 * A path as addresses are compared: percent-decoding undone, a trailing `index.html` and
 * trailing slashes dropped, lowercase (generators lowercase addresses by default).
 */
export function normalizeUrlPath (urlPath: string): string {
  let p = urlPath
  try { p = decodeURIComponent(p) } catch {}
  p = p.replace(/\/index\.html?$/i, '/').replace(/(?<!\/)\/+$/, '')
  return (p === '' ? '/' : p).toLowerCase()
}

function dateOf (value: unknown): RegExpExecArray | null {
  if (value instanceof Date && !Number.isNaN(value.getTime())) return DATE_VALUE.exec(value.toISOString())
  return typeof value === 'string' ? DATE_VALUE.exec(value) : null
}

/** Each `/` segment percent-encoded as a browser would send it (spaces and the like). */
function encodePath (value: string): string {
  return value.split('/').map(s => encodeURI(s)).join('/')
}
