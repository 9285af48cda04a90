/**
 * Bounds on how deeply Markdown and a block edit's HTML may nest, checked by a string scan before
 * parsing (500 nested list levels took 17 s to render); deeper input is refused or shown as plain text.
 */
import type { Root as HastRoot } from 'hast'
import { rehypeCmsSource, type CmsSourceOptions } from './editable-blocks.js'

/** The deepest nesting of block containers (block quotes and list items) a body may have. */
export const MAX_MARKDOWN_NESTING = 32
/** The deepest nesting of elements the HTML of a block edit may have. */
export const MAX_HTML_NESTING = 64

const FENCE = /^ {0,3}(`{3,}|~{3,})/
/** Emphasis delimiters nesting deeper than the block limit (40,000 `*` around a word took 44 s to render). */
const LONG_DELIMITER_RUN = new RegExp(`[*_]{${2 * MAX_MARKDOWN_NESTING + 1},}`)
const THEMATIC_BREAK = /^[ \t]*([*_-][ \t]*)+$/
/** Unclosed link destinations make the inline parser quadratic (20,000 in one paragraph took 4.3 s). */
const MAX_LINK_OPENERS_PER_PARAGRAPH = 1000
const VOID_ELEMENTS = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr'])

/**
 * The deepest block nesting of a Markdown body, over-estimated from each line's `>` and list markers.
 * @param body the Markdown
 * @returns the estimated depth
 */
export function markdownNestingDepth (body: string): number {
  let deepest = 0
  let fence: string | null = null
  let start = 0
  while (start <= body.length) {
    let end = body.indexOf('\n', start)
    if (end < 0) end = body.length
    const line = body.slice(start, end)
    start = end + 1
    const opened = FENCE.exec(line.replace(/^[\s>]*/, ''))
    if (fence !== null) {
      if (opened !== null && opened[1]!.startsWith(fence)) fence = null
      continue
    }
    if (LONG_DELIMITER_RUN.test(line) && !THEMATIC_BREAK.test(line)) return Number.POSITIVE_INFINITY
    const depth = lineDepth(line)
    if (depth > deepest) deepest = depth
    if (opened !== null) fence = opened[1]!.slice(0, 3)
  }
  return deepest
}

function lineDepth (line: string): number {
  let quotes = 0
  let items = 0
  let indent = 0
  let i = 0
  let leading = true
  while (i < line.length) {
    const c = line[i]!
    if (c === ' ' || c === '\t') {
      if (leading) indent += c === '\t' ? 4 : 1
      i++
      continue
    }
    if (c === '>') { quotes++; i++; leading = false; continue }
    const marker = /^(?:[-*+]|\d{1,9}[.)])(?=[ \t]|$)/.exec(line.slice(i, i + 11))
    if (marker === null) break
    items++
    i += marker[0].length
    leading = false
  }
  return quotes + items + (items > 0 ? Math.floor(indent / 2) : 0)
}

/**
 * Whether a Markdown body nests deeper than MAX_MARKDOWN_NESTING.
 * @param body the Markdown
 * @returns true when it must not be parsed
 */
export function markdownTooDeep (body: string): boolean {
  return markdownNestingDepth(body) > MAX_MARKDOWN_NESTING || tooManyLinkOpeners(body)
}

/** Whether a paragraph (text between blank lines) opens more links than the inline parser can take. */
function tooManyLinkOpeners (body: string): boolean {
  let count = 0
  let at = body.indexOf('](')
  let paragraphEnd = -1
  while (at >= 0) {
    if (at > paragraphEnd) {
      const blank = /\n[ \t]*\n/g
      blank.lastIndex = at
      const next = blank.exec(body)
      paragraphEnd = next === null ? body.length : next.index
      count = 0
    }
    if (++count > MAX_LINK_OPENERS_PER_PARAGRAPH) return true
    at = body.indexOf('](', at + 2)
  }
  return false
}

/**
 * Whether an HTML fragment nests elements deeper than MAX_HTML_NESTING (open minus close tags, up to the last `>`).
 * @param html the HTML of a block edit
 * @returns true when it must not be parsed
 */
export function htmlTooDeep (html: string): boolean {
  let depth = 0
  for (const m of html.slice(0, html.lastIndexOf('>') + 1).matchAll(/<(\/?)([A-Za-z][A-Za-z0-9-]*)[^>]*?(\/?)>/g)) {
    if (m[1] === '/') { depth = Math.max(0, depth - 1); continue }
    if (m[3] === '/' || VOID_ELEMENTS.has(m[2]!.toLowerCase())) continue
    if (++depth > MAX_HTML_NESTING) return true
  }
  return false
}

/**
 * The tree renderMarkdown gives for a body too deep to parse: the source as plain text.
 * @param body the Markdown
 * @param opts the entry and field (`blockPath` defaults to `body`)
 * @returns a hast tree
 */
export function plainTextTree (body: string, opts: CmsSourceOptions): HastRoot {
  const tree: HastRoot = { type: 'root', children: [{ type: 'element', tagName: 'pre', properties: {}, children: [{ type: 'text', value: body }] }] }
  rehypeCmsSource(opts)(tree)
  return tree
}
