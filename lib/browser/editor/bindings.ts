/**
 * The attributes a site's HTML binds content with: `data-cms="<collection>/<id>#<field.path>"`,
 * `data-cms-md="<collection>/<id>#<blockPath>"` (`data-cms-src` is parsed by api-shapes.ts's parseSourceHint).
 */

/** Where an element's content is stored. */
export interface Binding {
  collection: string
  id: string
  /** The field path (`data-cms`) or block path (`data-cms-md`). */
  path: string
}

/**
 * Parses `<collection>/<id>#<path>` (null when malformed): the collection ends at the first `/`,
 * the path starts after the last `#`; the server checks each part.
 */
export function parseBinding (value: string | undefined): Binding | null {
  const m = /^([a-z0-9][a-z0-9_-]{0,63})\/(.+)#([^#]+)$/.exec(value ?? '')
  if (m === null) return null
  return { collection: m[1]!, id: m[2]!, path: m[3]! }
}
