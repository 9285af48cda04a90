/**
 * One search over every collection (the Studio's dashboard box): the first few hits of each
 * collection's ranked search (as `GET /entries?q=` runs it), grouped; collections without one left out.
 */
import { BadRequestError } from '../errors.js'
import type { Services } from '../services.js'
import { titlesOf } from '../content/entry-search.js'
import { listEntries, type ListEntriesResult } from './list-entries.js'
import type { CommandContext } from './command-context.js'
import type { SearchGroup } from '../api-shapes.js'

/** Hits shown per collection. */
const SEARCH_HITS_PER_COLLECTION = 5

/** Searches every collection (the editor's drafts too); groups in the collections' order. */
export async function searchEverywhere (ctx: CommandContext, q: unknown): Promise<{ q: string, groups: SearchGroup[] }> {
  if (typeof q !== 'string' || q.trim() === '') throw new BadRequestError('q must be a non-empty string', { field: 'q' })
  const { services, identity } = ctx
  const groups: SearchGroup[] = []
  for (const def of await services.content.registry.list()) {
    const found = await searchOne(services, identity.id, def.name, q)
    if (found === null || found.entries.length === 0) continue
    groups.push({
      collection: def.name,
      label: def.metadata.label,
      total: found.pagination.total,
      entries: found.entries.map(e => ({
        id: e.id,
        title: titlesOf(e.data, def.titleField).find(t => t.trim() !== '') ?? e.id,
        ...(e.draft === true ? { draft: true as const } : {}),
        ...(e.snippet !== undefined ? { snippet: e.snippet } : {})
      }))
    })
  }
  return { q, groups }
}

async function searchOne (services: Services, editorId: string, collection: string, q: string): Promise<ListEntriesResult | null> {
  try {
    const drafts = await services.drafts.list(editorId, { collection })
    return await listEntries(services.content, services.search, { collection, q, page: 1, pageSize: SEARCH_HITS_PER_COLLECTION, drafts })
  } catch (err) {
    // A collection whose folder is missing or unreadable has no hits; the others still answer.
    services.log.warn({ err, collection }, 'search skipped a collection')
    return null
  }
}
