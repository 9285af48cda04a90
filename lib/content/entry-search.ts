/**
 * What `q` searches: an entry's id and its title fields (the collection's `titleField`, then
 * `title`, `name`, `label`).
 */
import type { EntryData } from './formats.js'

const TITLE_FIELDS = ['title', 'name', 'label']

/**
 * The entry's title values, in priority order.
 * @param data entry data
 * @param titleField the collection's own title field, if any
 * @returns the string values found
 */
export function titlesOf (data: EntryData | undefined, titleField: string | null): string[] {
  if (data === undefined) return []
  const fields = titleField !== null ? [titleField, ...TITLE_FIELDS] : TITLE_FIELDS
  return fields.map(f => Object.hasOwn(data, f) ? data[f] : undefined).filter((v): v is string => typeof v === 'string')
}

/**
 * The lowercased text `q` is matched against.
 * @param id entry id
 * @param data entry data
 * @param titleField the collection's own title field, if any
 * @returns the search text
 */
export function searchTextOf (id: string, data: EntryData | undefined, titleField: string | null): string {
  return [id, ...titlesOf(data, titleField)].join('\n').toLowerCase()
}
