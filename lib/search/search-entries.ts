/**
 * `q` over one collection as one editor sees it: the base entries from the collection's
 * full-text index (those the editor has a draft of left out), and the editor's own drafts (their
 * data laid over base, deletions hidden) tiered the same way and placed first within their tier.
 */
import type { CollectionIndex } from '../storage/collection-index.js'
import type { DraftRecord } from '../storage/draft-store.js'
import type { CollectionSearch, SiteSearch } from './collection-search.js'
import { entryText, tierOf } from './entry-text.js'
import type { SearchQuery } from './tokenize.js'

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

/** Every entry a search found, for a list that orders or filters them itself. */
export interface FoundAll {
  /** Base entries without a draft of this editor, in rank order. */
  baseIds: string[]
  /** This editor's drafts that match (deletions left out). */
  drafts: DraftRecord[]
}

/** The search of an index, once the changes the index was told of (watcher, directory) reached it. */
async function searchFor (site: SiteSearch, index: CollectionIndex): Promise<CollectionSearch> {
  await index.all()
  return site.of(index)
}

/** The editor's drafts that match, with their tier, in rank order (tier, then id). */
function matchingDrafts (index: CollectionIndex, query: SearchQuery, drafts: ReadonlyMap<string, DraftRecord>): Array<{ tier: number, draft: DraftRecord }> {
  const found: Array<{ tier: number, draft: DraftRecord }> = []
  for (const draft of drafts.values()) {
    if (draft.kind === 'delete') continue
    const tier = tierOf(entryText(draft.id, draft.data, index.collection.titleField), query)
    if (tier !== null) found.push({ tier, draft })
  }
  return found.sort((a, b) => a.tier - b.tier || (a.draft.id < b.draft.id ? -1 : 1))
}

/** Searches a collection for one editor. */
export async function searchEntries (site: SiteSearch, index: CollectionIndex, query: SearchQuery, drafts: ReadonlyMap<string, DraftRecord>, start: number, count: number): Promise<FoundPage> {
  const search = await searchFor(site, index)
  if (query.words.length === 0) { await search.ready(); return { total: 0, entries: [] } }
  const draftHits = matchingDrafts(index, query, drafts)
  const skip = new Set(drafts.keys())
  return await search.use(db => {
    const { total, ids, tiers } = db.search(query, skip, start + count)
    // Merge the two rankings up to the page's end: within a tier, drafts first.
    const ranked: FoundEntry[] = []
    let i = 0
    let j = 0
    while (ranked.length < start + count && (i < ids.length || j < draftHits.length)) {
      const hit = draftHits[j]
      if (hit !== undefined && (i >= ids.length || hit.tier <= (tiers[i] as number))) {
        ranked.push({ id: hit.draft.id, draft: hit.draft })
        j++
      } else {
        ranked.push({ id: ids[i++] as string, draft: null })
      }
    }
    return { total: total + draftHits.length, entries: ranked.slice(start) }
  })
}

/** Every match of a collection for one editor, unpaged (for `q` with `sort` or `draft`). */
export async function searchAllEntries (site: SiteSearch, index: CollectionIndex, query: SearchQuery, drafts: ReadonlyMap<string, DraftRecord>): Promise<FoundAll> {
  const search = await searchFor(site, index)
  if (query.words.length === 0) { await search.ready(); return { baseIds: [], drafts: [] } }
  const baseIds = await search.use(db => db.search(query, new Set(drafts.keys()), Infinity).ids)
  return { baseIds, drafts: matchingDrafts(index, query, drafts).map(hit => hit.draft) }
}
