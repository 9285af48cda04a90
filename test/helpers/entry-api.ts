/**
 * Test helper: one collection's list and one entry's read over the API of a test server, signed in.
 */
import type { TestServer } from './site.js'

/** A site config with a flat collection (`posts`) and a bundled one (`bundles`, `<id>/index.md`). */
export const FLAT_AND_BUNDLED_CONFIG = `collections:
  posts:
    format: md
    titleField: title
  bundles:
    format: md
    indexFile: index
    titleField: title
`

/** An entry as the list and read answers give it (the fields the tests look at). */
export interface EntryView { id: string, revision: number, data?: Record<string, unknown>, validationIssues?: unknown[] }

/**
 * Lists up to 100 entries of a collection.
 * @param s the server
 * @param collection collection name
 * @returns the entries; throws unless the answer is 200
 */
export async function listEntries (s: TestServer, collection: string): Promise<EntryView[]> {
  const res = await s.request(`/api/cms/entries?collection=${collection}&pageSize=100`, { headers: { cookie: await s.login() } })
  if (res.status !== 200) throw new Error(`list of ${collection} answered ${res.status}: ${await res.text()}`)
  return ((await res.json()) as { entries: EntryView[] }).entries
}

/**
 * Reads one entry.
 * @param s the server
 * @param collection collection name
 * @param id entry id
 * @returns the entry, or null when the answer is 404
 */
export async function readEntry (s: TestServer, collection: string, id: string): Promise<EntryView | null> {
  const res = await s.request(`/api/cms/entries?collection=${collection}&id=${encodeURIComponent(id)}`, { headers: { cookie: await s.login() } })
  if (res.status === 404) return null
  return ((await res.json()) as { entries: EntryView[] }).entries[0] ?? null
}
