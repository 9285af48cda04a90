/**
 * Which entry a page shows and which element holds its Markdown body, with no template change
 * (CONTRACT 14): by the collection's `url` pattern when it fits, else by the full-text index (entries
 * holding runs of the page's words) checked against the page's best body element.
 */
import type { Root } from 'hast'
import type { Services } from '../services.js'
import type { Collection } from '../storage/collection-registry.js'
import type { CollectionIndex } from '../storage/collection-index.js'
import { termsOf } from '../search/tokenize.js'
import { entryUrl, mayMatchUrl, normalizeUrlPath } from './page-match-url.js'
import { findBodyElement, mainTextTerms, type BodyElement } from './page-match-element.js'

/** Runs of this many consecutive words of the page are looked up in the full-text index. */
const PROBE_WORDS = 4
/** At most this many runs, spread over the page's main text. */
const PROBES = 12
/** Candidates (most runs found) checked against the page. */
const CANDIDATES = 4
/** Below this body-element score (0 to 1) a page is not taken to show the entry. */
const MIN_SCORE = 0.3

/** A page matched to an entry's body. */
interface PageMatch {
  collection: string
  id: string
  /** How it was found. */
  by: 'url' | 'text'
  /** The element holding the body. */
  body: BodyElement
}

/** Finds the entry a page shows and the element holding its body; null when no Markdown entry fits. */
export async function matchPage (services: Services, urlPath: string, tree: Root): Promise<PageMatch | null> {
  const collections = (await services.content.registry.list()).filter(c => c.format === 'md' || c.format === 'mdx')
  const byUrl = await matchByUrl(services, collections, urlPath, tree)
  if (byUrl !== null) return byUrl
  return await matchByText(services, collections, tree)
}

async function matchByUrl (services: Services, collections: Collection[], urlPath: string, tree: Root): Promise<PageMatch | null> {
  const wanted = normalizeUrlPath(urlPath)
  for (const collection of collections) {
    const pattern = services.config.collections[collection.name]?.url
    if (pattern === undefined || !mayMatchUrl(pattern, urlPath)) continue
    const index = await indexOf(services, collection)
    if (index === null) continue
    for (const row of await index.all()) {
      const url = entryUrl(pattern, row.id, row.fields ?? {})
      if (url === null || normalizeUrlPath(url) !== wanted) continue
      const body = await bodyElementOf(index, row.id, tree)
      if (body !== null) return { collection: collection.name, id: row.id, by: 'url', body }
    }
  }
  return null
}

async function matchByText (services: Services, collections: Collection[], tree: Root): Promise<PageMatch | null> {
  const words = mainTextTerms(tree)
  if (words.length === 0) return null
  const probes: string[][] = []
  const step = Math.max(1, Math.floor((words.length - PROBE_WORDS) / (PROBES - 1)))
  for (let at = 0; probes.length < PROBES && at < words.length; at += step) probes.push(words.slice(at, at + PROBE_WORDS))
  const votes = new Map<string, { collection: Collection, id: string, votes: number }>()
  for (const collection of collections) {
    const index = await indexOf(services, collection)
    if (index === null) continue
    const found = await services.search.of(index).use(db => probes.map(probe => db.search({ words: [...new Set(probe)], prefixLast: false }, new Set(), CANDIDATES).ids))
    for (const id of found.flat()) {
      const key = `${collection.name}/${id}`
      const vote = votes.get(key) ?? { collection, id, votes: 0 }
      vote.votes++
      votes.set(key, vote)
    }
  }
  let best: PageMatch | null = null
  for (const candidate of [...votes.values()].sort((a, b) => b.votes - a.votes).slice(0, CANDIDATES)) {
    const index = await indexOf(services, candidate.collection)
    const body = index === null ? null : await bodyElementOf(index, candidate.id, tree)
    if (body !== null && body.score >= MIN_SCORE && (best === null || body.score > best.body.score)) {
      best = { collection: candidate.collection.name, id: candidate.id, by: 'text', body }
    }
  }
  return best
}

/** The element of the page holding an entry's body, or null when the entry has no body. */
async function bodyElementOf (index: CollectionIndex, id: string, tree: Root): Promise<BodyElement | null> {
  const entry = await index.get(id)
  const body = entry?.data?.body
  if (typeof body !== 'string') return null
  return findBodyElement(tree, new Set(termsOf(body)))
}

/** A collection's index, or null when it cannot be built (the page then stays unmarked). */
async function indexOf (services: Services, collection: Collection): Promise<CollectionIndex | null> {
  return await services.content.index(collection.name).catch(() => null)
}
