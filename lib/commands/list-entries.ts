/**
 * Lists or reads entries of a collection as one editor sees them: base entries with that editor's
 * drafts laid over (`draft: true`, deletions hidden, new entries listed), paginated, filtered by
 * `q` over ids and title fields, sorted by a field and filtered by draft state, or one entry by `id`.
 */
import { UnreadableEntryError, NotFoundError } from '../errors.js'
import type { ContentStore } from '../storage/content-store.js'
import type { DraftRecord, DraftEntry } from '../storage/draft-store.js'
import type { IndexRow } from '../storage/collection-index.js'
import { searchTextOf } from '../content/entry-search.js'
import { toEntryView, type EntryView } from './entry-view.js'
import { sortRows, type SortedRowsCache } from './sorted-rows.js'
import type { SortDirection } from './sort-keys.js'
import { checkSortField, overlayPage, sortMatching, type DraftFilter, type DraftRow, type ListRow } from './list-order.js'

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
  /** Sort by `id`, `title` or a field of the schema; absent: index order (or `q`'s). */
  sort?: string
  order?: SortDirection
  /** Only this editor's drafted entries, only the others, or all (default). */
  draft?: DraftFilter
  /** The instance's cache of sorted orders. */
  sortCache?: SortedRowsCache
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
  const titleField = index.collection.titleField

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

  const all = await index.all()
  const needle = input.q?.trim().toLowerCase() ?? ''
  const start = (input.page - 1) * pageSize
  // Step 1, matching: the base rows `q` selects, in index (or relevance) order.
  const matching = needle === '' ? all : all.filter(e => e.search.includes(needle))
  // Step 2, order and draft state (list-order.ts): a cached sorted order, the drafts laid over.
  const sort = input.sort === undefined ? null : { field: input.sort, direction: input.order ?? 'asc' }
  if (sort !== null) await checkSortField(content, index, all, sort, input.sortCache)
  const ordered = sort === null
    ? matching
    : matching === all
      ? (input.sortCache?.sorted(input.collection, all, index.revision, sort) ?? sortRows(all, sort))
      : sortMatching(input.collection, all, index.revision, matching, sort, input.sortCache)
  if (drafts.size === 0) {
    // No per-entry objects here: a list request allocating one per entry of a big collection
    // makes V8 allocate them straight into the old generation, which then grows for good.
    const base = input.draft === 'only' ? [] : ordered
    const entries = (await index.freshen(base.slice(start, start + pageSize))).map(toEntryView)
    return { collection: input.collection, entries, pagination: paginate(input.page, pageSize, base.length) }
  }
  const draftRows: DraftRow[] = []
  for (const draft of drafts.values()) {
    if (draft.kind === 'delete') continue
    const search = searchText(draft, titleField)
    if (needle === '' || search.includes(needle)) draftRows.push({ kind: 'draft', record: draft, search })
  }
  const { rows: pageRows, total } = overlayPage(ordered, drafts, draftRows, {
    sort, titleField, start, size: pageSize, base: input.draft !== 'only', drafted: input.draft !== 'none'
  })
  const fresh = new Map((await index.freshen(pageRows.filter(isBase))).map(e => [e.id, e]))
  const entries: EntryView[] = []
  for (const row of pageRows) {
    if (!isBase(row)) { entries.push(draftView(row.record)); continue }
    const entry = fresh.get(row.id)
    if (entry !== undefined) entries.push(toEntryView(entry))
  }
  return { collection: input.collection, entries, pagination: paginate(input.page, pageSize, total) }
}

function isBase (row: ListRow): row is IndexRow {
  return !('record' in row)
}

function draftView (draft: DraftRecord): EntryView {
  return { id: draft.id, data: draft.data, revision: draft.revision, draft: true }
}

function searchText (draft: DraftRecord, titleField: string | null): string {
  return searchTextOf(draft.id, draft.data, titleField)
}

function paginate (page: number, pageSize: number, total: number): Pagination {
  const totalPages = Math.max(1, Math.ceil(total / pageSize))
  return { page, pageSize, total, totalPages, hasPrev: page > 1, hasNext: page < totalPages }
}
