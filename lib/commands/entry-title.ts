/** The text that names an entry in lists and search results. */

/** An entry's title: its collection's title field, else `title`, `name` or `label`, else its id. */
export function entryTitleOf (id: string, data: Record<string, unknown> | undefined, titleField: string | null): string {
  for (const k of [titleField, 'title', 'name', 'label']) {
    if (k === null) continue
    const v = data?.[k]
    if (typeof v === 'string' && v.trim() !== '') return v
  }
  return id
}
