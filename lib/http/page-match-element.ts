/**
 * Reading a page the generator built (`serve --proxy`/`--site`): its text as search terms, whether its
 * templates mark an element, and which element holds an entry's body (the container covering the
 * body's words best with fewest of its own). Positions are offsets in the text (hast-util-from-html).
 */
import type { Element, Root, RootContent } from 'hast'
import { forEachTerm } from '../search/tokenize.js'

/** Elements whose text is never page content. */
const NOT_TEXT = new Set(['script', 'style', 'noscript', 'template', 'head', 'svg', 'math', 'iframe', 'object'])
/** Site chrome: its words count for its ancestors but it is left out of the page's main text. */
const CHROME = new Set(['nav', 'header', 'footer', 'aside', 'form', 'button', 'select'])
/** Elements that can hold a whole rendered body (a paragraph or a list cannot). */
const CONTAINERS = new Set(['body', 'main', 'article', 'section', 'div', 'td'])
/** Nesting beyond this is read as text-less (a page nested this deep is not a template's output). */
const MAX_DEPTH = 400

/** An element chosen to hold an entry's body, with where its start tag's name ends in the page's text. */
export interface BodyElement {
  element: Element
  /** Offset in the page's text right after `<tagname` (an attribute goes there). */
  attributeAt: number
  /** Share of the body's words the element holds, times the share of its words that are the body's (0 to 1). */
  score: number
}

/** Whether the page's templates already mark an element for the editor (`data-cms`, `data-cms-md`). */
export function hasEditorBinding (node: Root | RootContent, depth = 0): boolean {
  if (depth > MAX_DEPTH || (node.type !== 'element' && node.type !== 'root')) return false
  if (node.type === 'element' && (node.properties.dataCms !== undefined || node.properties.dataCmsMd !== undefined)) return true
  return node.children.some(child => hasEditorBinding(child, depth + 1))
}

/**
 * The words of a page's main text (script, style and site chrome left out), folded as the search
 * indexes them.
 */
export function mainTextTerms (tree: Root): string[] {
  const terms: string[] = []
  const visit = (node: Root | RootContent, depth: number): void => {
    if (depth > MAX_DEPTH) return
    if (node.type === 'text') { forEachTerm(node.value, t => { terms.push(t) }); return }
    if (node.type === 'element' && (NOT_TEXT.has(node.tagName) || CHROME.has(node.tagName))) return
    if (node.type === 'element' || node.type === 'root') for (const child of node.children) visit(child, depth + 1)
  }
  visit(tree, 0)
  return terms
}

/**
 * The container element that holds an entry's body: among `body`, `main`, `article`, `section`,
 * `div` and `td`, the one with the best product of recall (share of the body's distinct words it
 * holds) and precision (share of its words that are body words); on a tie, the innermost.
 */
export function findBodyElement (tree: Root, bodyTerms: ReadonlySet<string>): BodyElement | null {
  if (bodyTerms.size === 0) return null
  let best: { element: Element, score: number } | null = null
  interface Tally { found: Set<string>, total: number, inBody: number }
  const visit = (node: Root | RootContent, depth: number): Tally => {
    const tally: Tally = { found: new Set(), total: 0, inBody: 0 }
    if (node.type === 'text') {
      forEachTerm(node.value, term => {
        tally.total++
        if (bodyTerms.has(term)) { tally.inBody++; tally.found.add(term) }
      })
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
