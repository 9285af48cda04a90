/**
 * Which entry a page the generator built shows (`serve --proxy`/`--site`) and which element holds its
 * Markdown body, with no template change (CONTRACT 14): by the collection's `url` pattern, else by
 * runs of the page's words in the full-text index, checked against the page's best body element.
 */
import type { Element, Root, RootContent } from 'hast'
import type { Services } from '../services.js'
import type { Collection } from '../storage/collection-registry.js'
import type { CollectionIndex } from '../storage/collection-index.js'
import { termsOf } from '../search/tokenize.js'
import { entryUrl, mayMatchUrl, normalizeUrlPath } from './page-match-url.js'

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

/**
 * Finds the entry a page shows and the element holding its body; null when no Markdown entry fits
 * or the page's templates already mark an element for the editor.
 */
export async function matchPage (services: Services, urlPath: string, tree: Root): Promise<PageMatch | null> {
  if (hasEditorBinding(tree)) return null
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

/** Elements whose text is never page content. */
const NOT_TEXT = new Set(['script', 'style', 'noscript', 'template', 'head', 'svg', 'math', 'iframe', 'object'])
/** Site chrome: its words count for its ancestors but it is left out of the page's main text. */
const CHROME = new Set(['nav', 'header', 'footer', 'aside', 'form', 'button', 'select'])
/** Elements that can hold a whole rendered body (a paragraph or a list cannot). */
const CONTAINERS = new Set(['body', 'main', 'article', 'section', 'div', 'td'])
/** Nesting beyond this is read as text-less (a page nested this deep is not a template's output). */
const MAX_DEPTH = 400

/** An element chosen to hold an entry's body, with where its start tag's name ends in the page's text. */
interface BodyElement {
  element: Element
  /** Offset in the page's text right after `<tagname` (an attribute goes there). */
  attributeAt: number
  /** Share of the body's words the element holds, times the share of its words that are the body's (0 to 1). */
  score: number
}

/** Whether the page's templates already mark an element for the editor (`data-cms`, `data-cms-md`). */
function hasEditorBinding (node: Root | RootContent, depth = 0): boolean {
  if (depth > MAX_DEPTH || (node.type !== 'element' && node.type !== 'root')) return false
  if (node.type === 'element' && (node.properties.dataCms !== undefined || node.properties.dataCmsMd !== undefined)) return true
  return node.children.some(child => hasEditorBinding(child, depth + 1))
}

/** The words of a page's main text (no script, style or site chrome), folded as the search indexes them. */
function mainTextTerms (tree: Root): string[] {
  const terms: string[] = []
  const visit = (node: Root | RootContent, depth: number): void => {
    if (depth > MAX_DEPTH) return
    if (node.type === 'text') { for (const term of termsOf(node.value)) terms.push(term); return }
    if (node.type === 'element' && (NOT_TEXT.has(node.tagName) || CHROME.has(node.tagName))) return
    if (node.type === 'element' || node.type === 'root') for (const child of node.children) visit(child, depth + 1)
  }
  visit(tree, 0)
  return terms
}

/** The container with the best recall (body words it holds) times precision (its words in the body); on a tie, the innermost. */
function findBodyElement (tree: Root, bodyTerms: ReadonlySet<string>): BodyElement | null {
  if (bodyTerms.size === 0) return null
  let best: { element: Element, score: number } | null = null
  interface Tally { found: Set<string>, total: number, inBody: number }
  const visit = (node: Root | RootContent, depth: number): Tally => {
    const tally: Tally = { found: new Set(), total: 0, inBody: 0 }
    if (node.type === 'text') {
      for (const term of termsOf(node.value)) {
        tally.total++
        if (bodyTerms.has(term)) { tally.inBody++; tally.found.add(term) }
      }
      return tally
    }
    if ((node.type !== 'element' && node.type !== 'root') || depth > MAX_DEPTH) return tally
    if (node.type === 'element' && NOT_TEXT.has(node.tagName)) return tally
    let found = tally.found
    for (const child of node.children) {
      const sub = visit(child, depth + 1)
      tally.total += sub.total
      tally.inBody += sub.inBody
      // The smaller set goes into the larger: every term is moved O(log n) times at most.
      if (sub.found.size > found.size) [found, sub.found] = [sub.found, found]
      for (const term of sub.found) found.add(term)
    }
    tally.found = found
    if (node.type === 'element' && CONTAINERS.has(node.tagName) && tally.total > 0) {
      const score = (found.size / bodyTerms.size) * (tally.inBody / tally.total)
      if (best === null || score > best.score) best = { element: node, score }
    }
    return tally
  }
  visit(tree, 0)
  const chosen = best as { element: Element, score: number } | null
  const start = chosen?.element.position?.start.offset
  if (chosen === null || chosen.score === 0 || start === undefined) return null
  return { element: chosen.element, attributeAt: start + 1 + chosen.element.tagName.length, score: chosen.score }
}
