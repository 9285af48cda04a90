/**
 * Lists or reads entries of a collection: pagination, `q` over ids and title fields, `id=`.
 */
import { UnreadableEntryError, NotFoundError } from '../errors.js'
import type { ContentStore } from '../storage/content-store.js'
import { toEntryView, type EntryView } from './entry-view.js'

export const DEFAULT_PAGE_SIZE = 24
export const MAX_PAGE_SIZE = 100

export interface ListEntriesInput {
  collection: string
  id?: string
  q?: string
  page: number
  pageSize: number
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
 * @param input validated query
 * @returns the spec's entries response
 */
export async function listEntries (content: ContentStore, input: ListEntriesInput): Promise<ListEntriesResult> {
  const index = await content.index(input.collection)
  const pageSize = Math.min(input.pageSize, MAX_PAGE_SIZE)
  if (input.id !== undefined) {
    const entry = await index.get(input.id)
    if (entry === null) throw new NotFoundError('Entry not found', { collection: input.collection, id: input.id })
    if (entry.readError !== undefined) {
      throw new UnreadableEntryError('Stored entry cannot be read', { collection: input.collection, id: input.id, readError: entry.readError, revision: entry.revision })
    }
    return { collection: input.collection, entries: [toEntryView(entry)], pagination: paginate(1, pageSize, 1) }
  }
  const all = await index.all()
  const needle = input.q?.trim().toLowerCase() ?? ''
  const matching = needle === '' ? all : all.filter(e => e.search.includes(needle))
  const start = (input.page - 1) * pageSize
  const page = await index.freshen(matching.slice(start, start + pageSize))
  return {
    collection: input.collection,
    entries: page.map(toEntryView),
    pagination: paginate(input.page, pageSize, matching.length)
  }
}

function paginate (page: number, pageSize: number, total: number): Pagination {
  const totalPages = Math.max(1, Math.ceil(total / pageSize))
  return { page, pageSize, total, totalPages, hasPrev: page > 1, hasNext: page < totalPages }
}
