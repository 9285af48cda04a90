/**
 * `q` over one collection as one editor sees it: the base entries from the collection's
 * full-text index, the editor's own drafts (their data laid over base, deletions hidden) searched
 * as they are, one ranking of both; a page of ids in rank order and the total.
 */
import type { CollectionIndex } from '../storage/collection-index.js'
import type { DraftRecord } from '../storage/draft-store.js'
import { entryTerms } from './entry-terms.js'
import { searchOf } from './collection-search.js'
import { MAX_DOCS, rankKey } from './ranking.js'
import type { SearchQuery } from './search-query.js'

/** One entry found: a base entry (draft null) or the editor's draft of one. */
export interface FoundEntry {
  id: string
  draft: DraftRecord | null
}

/** A page of what a search found. */
export interface FoundPage {
  /** Every match, not only the page's. */
  total: number
  /** The page's entries in rank order. */
  entries: FoundEntry[]
}

/**
 * Searches a collection for one editor.
 * @param index the collection's index (with its search attached)
 * @param query the parsed query
 * @param drafts the editor's drafts of the collection, by id
 * @param start rank of the page's first entry (0-based)
 * @param count page size
 * @returns the page and the total
 */
export async function searchEntries (index: CollectionIndex, query: SearchQuery, drafts: ReadonlyMap<string, DraftRecord>, start: number, count: number): Promise<FoundPage> {
  // The collection index takes the changes it has been told of (watcher, directory): each one
  // reaches the full-text index before it is searched.
  await index.all()
  const search = searchOf(index)
  if (search === undefined) throw new Error(`no search for collection ${index.collection.name}`)
  if (query.words.length === 0) { await search.ready(); return { total: 0, entries: [] } }
  const { ranked, draftHits } = await search.use(text => {
    const ranked = text.search(query, new Set(drafts.keys()), start + count)
    const draftHits: Array<{ key: number, draft: DraftRecord }> = []
    for (const draft of drafts.values()) {
      if (draft.kind === 'delete') continue
      const rank = text.rankTerms(query, entryTerms(draft.id, draft.data, index.collection.titleField))
      if (rank !== null) draftHits.push({ key: rankKey(rank.tier, rank.score, MAX_DOCS - 1), draft })
    }
    return { ranked, draftHits }
  })
  draftHits.sort((a, b) => a.key - b.key || (a.draft.id < b.draft.id ? -1 : 1))
  // Merge the two rankings up to the page's end.
  const entries: FoundEntry[] = []
  const keys = ranked.keys
  let i = 0
  let j = 0
  for (let rank = 0; rank < start + count && (i < keys.length || j < draftHits.length); rank++) {
    const draftHit = draftHits[j]
    const takeDraft = draftHit !== undefined && (i >= keys.length || draftHit.key < (keys[i] as number))
    const found: FoundEntry = takeDraft ? { id: (draftHit as { draft: DraftRecord }).draft.id, draft: (draftHit as { draft: DraftRecord }).draft } : { id: ranked.idOf(keys[i] as number), draft: null }
    if (takeDraft) j++
    else i++
    if (rank >= start) entries.push(found)
  }
  return { total: ranked.total + draftHits.length, entries }
}

/** Every entry a search found, for a list that orders or filters them itself. */
export interface FoundAll {
  /** Base entries without a draft of this editor, in rank order. */
  baseIds: string[]
  /** This editor's drafts that match (deletions left out). */
  drafts: DraftRecord[]
}

/**
 * Searches a collection for one editor and gives every match, unpaged (for `q` with `sort` or
 * `draft`: the list orders and filters them).
 * @param index the collection's index (with its search attached)
 * @param query the parsed query
 * @param drafts the editor's drafts of the collection, by id
 * @returns the matching base ids in rank order and the matching drafts
 */
export async function searchAllEntries (index: CollectionIndex, query: SearchQuery, drafts: ReadonlyMap<string, DraftRecord>): Promise<FoundAll> {
  await index.all()
  const search = searchOf(index)
  if (search === undefined) throw new Error(`no search for collection ${index.collection.name}`)
  if (query.words.length === 0) { await search.ready(); return { baseIds: [], drafts: [] } }
  return await search.use(text => {
    const ranked = text.search(query, new Set(drafts.keys()))
    const baseIds: string[] = []
    for (const key of ranked.keys) baseIds.push(ranked.idOf(key))
    const found: DraftRecord[] = []
    for (const draft of drafts.values()) {
      if (draft.kind === 'delete') continue
      if (text.rankTerms(query, entryTerms(draft.id, draft.data, index.collection.titleField)) !== null) found.push(draft)
    }
    return { baseIds, drafts: found }
  })
}
