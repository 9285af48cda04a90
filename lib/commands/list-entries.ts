/**
 * Lists or reads entries of a collection as one editor sees them: base entries with that editor's
 * drafts laid over (`draft: true`, deletions hidden, new entries listed), paginated, or found by
 * `q` (full text: ids, every string field and the body; ranked, each with a snippet; see
 * lib/search/), or one entry by `id`.
 */
import { UnreadableEntryError, NotFoundError } from '../errors.js'
import type { ContentStore } from '../storage/content-store.js'
import type { DraftRecord, DraftEntry } from '../storage/draft-store.js'
import type { IndexRow } from '../storage/collection-index.js'
import { toEntryView, type EntryView } from './entry-view.js'
import type { CollectionIndex } from '../storage/collection-index.js'
import { parseQuery, type SearchQuery } from '../search/search-query.js'
import { searchEntries } from '../search/search-entries.js'
import { snippetOf } from '../search/snippet.js'

export const DEFAULT_PAGE_SIZE = 24
export const MAX_PAGE_SIZE = 100

export interface ListEntriesInput {
  collection: string
  id?: string
  q?: string
  page: number
  pageSize: number
  /** The reading editor's drafts of this collection (empty without drafts). */
  drafts?: DraftEntry[]
}

export interface Pagination {
  page: number
  pageSize: number
  total: number
  totalPages: number
  hasPrev: boolean
  hasNext: boolean
}

export interface ListEntriesResult {
  collection: string
  entries: EntryView[]
  pagination: Pagination
}

/** A list row: a base entry (the index's own row, no wrapper), or the editor's draft of one. */
type Row = IndexRow | { kind: 'draft', record: DraftRecord }

/**
 * Lists a page of entries, or reads one.
 * @param content the content store
 * @param input validated query and the editor's drafts
 * @returns the spec's entries response
 */
export async function listEntries (content: ContentStore, input: ListEntriesInput): Promise<ListEntriesResult> {
  const index = await content.index(input.collection)
  const pageSize = Math.min(input.pageSize, MAX_PAGE_SIZE)
  const drafts = new Map<string, DraftRecord>()
  for (const d of input.drafts ?? []) if (!('legacy' in d)) drafts.set(d.id, d)

  if (input.id !== undefined) {
    index.checkFolder()
    index.checkId(input.id)
    const draft = drafts.get(input.id)
    if (draft !== undefined) {
      if (draft.kind === 'delete') throw new NotFoundError('Entry not found', { collection: input.collection, id: input.id })
      return { collection: input.collection, entries: [draftView(draft)], pagination: paginate(1, pageSize, 1) }
    }
    const entry = await index.get(input.id)
    if (entry === null) throw new NotFoundError('Entry not found', { collection: input.collection, id: input.id })
    if (entry.readError !== undefined) {
      throw new UnreadableEntryError('Stored entry cannot be read', { collection: input.collection, id: input.id, readError: entry.readError, revision: entry.revision })
    }
    return { collection: input.collection, entries: [toEntryView(entry)], pagination: paginate(1, pageSize, 1) }
  }

  const query = parseQuery(input.q)
  if (query !== null) return await searchPage(index, input.collection, query, drafts, input.page, pageSize)
  const all = await index.all()
  const start = (input.page - 1) * pageSize
  if (drafts.size === 0) {
    // No per-entry objects here: a list request allocating one per entry of a big collection
    // makes V8 allocate them straight into the old generation, which then grows for good.
    const entries = (await index.freshen(all.slice(start, start + pageSize))).map(toEntryView)
    return { collection: input.collection, entries, pagination: paginate(input.page, pageSize, all.length) }
  }
  const rows: Row[] = []
  for (const entry of all) {
    const draft = drafts.get(entry.id)
    if (draft === undefined) { rows.push(entry); continue }
    drafts.delete(entry.id)
    if (draft.kind === 'delete') continue
    rows.push({ kind: 'draft', record: draft })
  }
  // Entries that exist only as this editor's drafts, after the base ones.
  for (const draft of [...drafts.values()].sort((a, b) => a.id < b.id ? -1 : 1)) {
    if (draft.kind === 'delete') continue
    rows.push({ kind: 'draft', record: draft })
  }
  const pageRows = rows.slice(start, start + pageSize)
  const fresh = new Map((await index.freshen(pageRows.filter(isBase))).map(e => [e.id, e]))
  const entries: EntryView[] = []
  for (const row of pageRows) {
    if (!isBase(row)) { entries.push(draftView(row.record)); continue }
    const entry = fresh.get(row.id)
    if (entry !== undefined) entries.push(toEntryView(entry))
  }
  return { collection: input.collection, entries, pagination: paginate(input.page, pageSize, rows.length) }
}

/**
 * A page of the entries matching `q`, ranked, each with the snippet of its first matching field.
 */
async function searchPage (index: CollectionIndex, collection: string, query: SearchQuery, drafts: Map<string, DraftRecord>, page: number, pageSize: number): Promise<ListEntriesResult> {
  const found = await searchEntries(index, query, drafts, (page - 1) * pageSize, pageSize)
  const entries: EntryView[] = []
  for (const hit of found.entries) {
    const entry = hit.draft === null ? await index.get(hit.id) : null
    const view = hit.draft !== null ? draftView(hit.draft) : entry !== null ? toEntryView(entry) : null
    if (view === null) continue
    const snippet = snippetOf(view.data, query, index.collection.titleField)
    if (snippet !== null) view.snippet = snippet
    entries.push(view)
  }
  return { collection, entries, pagination: paginate(page, pageSize, found.total) }
}

function isBase (row: Row): row is IndexRow {
  return !('record' in row)
}

function draftView (draft: DraftRecord): EntryView {
  return { id: draft.id, data: draft.data, revision: draft.revision, draft: true }
}

function paginate (page: number, pageSize: number, total: number): Pagination {
  const totalPages = Math.max(1, Math.ceil(total / pageSize))
  return { page, pageSize, total, totalPages, hasPrev: page > 1, hasNext: page < totalPages }
}
