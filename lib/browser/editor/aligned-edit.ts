/**
 * A generator's rendering of a Markdown field edited in place (CONTRACT 14): its blocks (in a
 * `[data-cms-md]` element, in page order, their text as a reader sees it without nested blocks or
 * the generator's permalinks and footnote marks) paired with the source (align.ts) and marked, and
 * in an edited block its text, the marks the toolbar added, a draft's text and the caret. The
 * generator's own markup is never read back as the author's text.
 */
import { alignBlocks, alignmentKey } from './align.js'
import { select } from './inline-format.js'
import { FORMATS } from './editor-ui.js'
import type { SourceBlock, TextMark } from '../../api-shapes.js'

/** The attribute the toolbar puts on the elements it adds (bold, italic, code, link). */
export const MARK_ATTRIBUTE = 'data-cms-mark'

/** One piece of a block's own text with its offset. */
interface Piece { node: Text | HTMLBRElement, start: number, length: number }

function pieces (block: Element): Piece[] {
  const out: Piece[] = []
  let at = 0
  walkOwnText(block, (node) => {
    const length = node instanceof HTMLBRElement ? 1 : node.data.length
    out.push({ node, start: at, length })
    at += length
  })
  return out
}

/** The text of a block's pieces (no-break spaces as spaces: a browser types one at the end of a text). */
function textOf (all: Piece[]): string {
  return all.map(p => p.node instanceof HTMLBRElement ? '\n' : p.node.data.replace(/\u00a0/g, ' ')).join('')
}

/** Elements laid out as blocks: a block's own text never includes theirs. */
const BLOCKY = new Set(['P', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'LI', 'PRE', 'TABLE', 'BLOCKQUOTE', 'HR',
  'DT', 'DD', 'DIV', 'SECTION', 'ARTICLE', 'UL', 'OL', 'DL', 'FIGURE', 'FIGCAPTION', 'ASIDE', 'HEADER',
  'FOOTER', 'NAV', 'MAIN', 'DETAILS', 'SUMMARY', 'FORM', 'ADDRESS', 'HGROUP'])
/** Blocks taken whole (never walked into). */
const ATOMIC = new Set(['PRE', 'TABLE', 'HR'])
/** Never text of the page. */
const SKIPPED = new Set(['SCRIPT', 'STYLE', 'TEMPLATE', 'NOSCRIPT'])

/** Whether an element is a generator's footnotes list (kramdown, goldmark, markdown-it, remark), not body blocks. */
function isFootnoteSection (el: Element): boolean {
  return el.classList.contains('footnotes') || el.getAttribute('role') === 'doc-endnotes' || el.hasAttribute('data-footnotes')
}

/** Whether an element is generator markup in an author's block: a permalink, a footnote mark, something hidden. */
function isGeneratorMarkup (el: Element): boolean {
  if (SKIPPED.has(el.tagName) || el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('hidden')) return true
  if (el.tagName === 'A') {
    const href = el.getAttribute('href') ?? ''
    const cls = el.getAttribute('class') ?? ''
    if (/(?:^|[\s-])(?:footnote|reversefootnote|footnote-backref|footnote-ref|data-footnote-backref)(?:$|\s)/.test(cls) || el.hasAttribute('data-footnote-backref') || el.getAttribute('role') === 'doc-backlink') return true
    // A permalink: an in-page link holding no words (`#`, `¶`, an icon) or marked as one.
    if (href.startsWith('#') && (/anchor|permalink|headerlink|hash-link/i.test(cls) || !/[\p{L}\p{N}]/u.test(el.textContent ?? ''))) return true
  }
  // A footnote reference: <sup> around a link to the note (kramdown, goldmark, markdown-it, remark).
  if (el.tagName === 'SUP' && el.querySelector('a[href^="#fn"], a[role="doc-noteref"], a[data-footnote-ref]') !== null) return true
  return false
}

/** Calls `visit` for every text node (and `<br>`) of a block's own text, in order. */
function walkOwnText (block: Element, visit: (node: Text | HTMLBRElement) => void): void {
  const walk = (el: Element): void => {
    for (let n = el.firstChild; n !== null; n = n.nextSibling) {
      if (n.nodeType === Node.TEXT_NODE) visit(n as Text)
      else if (n instanceof HTMLBRElement) visit(n)
      else if (n instanceof Element && !BLOCKY.has(n.tagName) && !isGeneratorMarkup(n)) walk(n)
    }
  }
  walk(block)
}

/** A block's own text as a reader sees it (`<br>` as a line break, no-break spaces as spaces). */
export function ownText (block: Element): string {
  return textOf(pieces(block))
}

/** The blocks of a rendered Markdown element, in page order, with their own text: atomic ones, and others holding words (or an image) of their own. */
function pageBlocks (root: Element, skip: (el: Element) => boolean): Array<{ el: HTMLElement, text: string }> {
  const out: Array<{ el: HTMLElement, text: string }> = []
  const walk = (el: Element): void => {
    for (let c = el.firstElementChild; c !== null; c = c.nextElementSibling) {
      if (!(c instanceof HTMLElement) || SKIPPED.has(c.tagName) || isFootnoteSection(c) || skip(c)) continue
      if (!BLOCKY.has(c.tagName)) { walk(c); continue }
      const text = ownText(c)
      if (ATOMIC.has(c.tagName)) { out.push({ el: c, text }); continue }
      if (text.trim() !== '' || (c.tagName === 'P' && c.querySelector('img, picture, svg, video') !== null)) out.push({ el: c, text })
      walk(c)
    }
  }
  walk(root)
  return out
}

/** The hinted blocks of a wrapper, in document order (hints never nest). */
export function hintedBlocks (root: Element): HTMLElement[] {
  return Array.from(root.querySelectorAll<HTMLElement>('[data-cms-src]'))
}

/** A block's own text and the formatting the toolbar added in it. */
export function textAndMarks (block: Element): { text: string, marks: TextMark[] } {
  const all = pieces(block)
  const text = textOf(all)
  const marks: TextMark[] = []
  for (const el of Array.from(block.querySelectorAll(`[${MARK_ATTRIBUTE}]`))) {
    const type = FORMATS.find(f => f.tag === el.localName)?.mark
    const inside = all.filter(p => el.contains(p.node))
    const first = inside[0]
    const last = inside[inside.length - 1]
    if (type === undefined || first === undefined || last === undefined) continue
    const mark: TextMark = { type, start: first.start, end: last.start + last.length }
    if (type === 'link') mark.href = el.getAttribute('href') ?? ''
    if (mark.end > mark.start) marks.push(mark)
  }
  return { text, marks }
}

/** What hovering a block that cannot be edited says. */
const NOT_EDITABLE = 'Not editable here: this part of the page comes from the site\'s template, a shortcode or a component, not from the text of the entry.'
const NOT_EDITABLE_KIND = 'Not editable here: edit this part (code, a table, raw HTML) in the Studio.'

/**
 * Pairs a wrapper's rendered blocks with the source blocks and marks them: paired blocks get the
 * source hint and `data-cms-aligned` (only one with a draft changes what the page shows); the
 * others say on hover why they cannot be edited.
 * @returns how many blocks were looked at and made editable, and how long the pairing took (ms)
 */
export function markAligned (wrapper: HTMLElement, source: readonly SourceBlock[], showDrafts: boolean, skip: (el: Element) => boolean): { blocks: number, editable: number, ms: number } {
  // Old hints go (a served rendering's too, on elements that are not page blocks: a quote, a <pre>'s code).
  for (const el of hintedBlocks(wrapper)) if (!skip(el)) delete el.dataset.cmsSrc
  const began = performance.now()
  const blocks = pageBlocks(wrapper, skip)
  const pairs = alignBlocks(blocks.map(({ el, text }) => ({ tag: el.tagName.toLowerCase(), text })), source)
  const ms = performance.now() - began
  let editable = 0
  blocks.forEach(({ el, text }, k) => {
    const j = pairs[k]
    const block = j === null || j === undefined ? undefined : source[j]
    if (block?.editable === true) {
      el.dataset.cmsSrc = block.src
      el.dataset.cmsAligned = ''
      delete el.dataset.cmsLocked
      el.classList.remove('cms-fixed')
      editable++
      if (showDrafts && alignmentKey(text) !== alignmentKey(block.text)) {
        applyTextChange(el, block.text)
        el.classList.add('cms-draft')
        el.dataset.cmsState = 'draft'
      }
      return
    }
    el.dataset.cmsLocked = block === undefined ? NOT_EDITABLE : NOT_EDITABLE_KIND
    el.classList.add('cms-fixed')
    if (!el.hasAttribute('title')) el.title = el.dataset.cmsLocked
  })
  return { blocks: blocks.length, editable, ms }
}

/** A DOM position at a text offset of the block (start side: after a piece that ends there). */
function position (all: Piece[], offset: number, preferEnd: boolean): [Node, number] | null {
  for (const p of all) {
    const inside = preferEnd ? offset > p.start && offset <= p.start + p.length : offset >= p.start && offset < p.start + p.length
    if (!inside) continue
    if (p.node instanceof HTMLBRElement) {
      const parent = p.node.parentNode!
      const index = Array.prototype.indexOf.call(parent.childNodes, p.node) as number
      return [parent, offset === p.start ? index : index + 1]
    }
    return [p.node, offset - p.start]
  }
  return null
}

/** Shows another text in a block, changing only the part between the two texts' common start and end (markup outside it stays). */
function applyTextChange (block: Element, next: string): void {
  const all = pieces(block)
  const now = textOf(all)
  if (now === next) return
  let prefix = 0
  const shortest = Math.min(now.length, next.length)
  while (prefix < shortest && now[prefix] === next[prefix]) prefix++
  let suffix = 0
  while (suffix < shortest - prefix && now[now.length - 1 - suffix] === next[next.length - 1 - suffix]) suffix++
  const middle = next.slice(prefix, next.length - suffix)
  const range = document.createRange()
  const start = position(all, prefix, prefix > 0) ?? position(all, prefix, false)
  const end = position(all, now.length - suffix, true) ?? start
  if (start === null || end === null) {
    block.append(document.createTextNode(middle))
    return
  }
  range.setStart(start[0], start[1])
  range.setEnd(end[0], end[1])
  range.deleteContents()
  if (middle !== '') range.insertNode(document.createTextNode(middle))
}

/**
 * Makes the generator's markup inside a block (and blocks nested in it) impossible to type into
 * while it is edited.
 */
export function freezeGeneratorMarkup (block: Element): () => void {
  const frozen: HTMLElement[] = []
  const walk = (el: Element): void => {
    for (let c = el.firstElementChild; c !== null; c = c.nextElementSibling) {
      if (!(c instanceof HTMLElement)) continue
      const generator = isGeneratorMarkup(c) || /^(?:P|H[1-6]|LI|PRE|TABLE|BLOCKQUOTE|UL|OL|DL|DIV|FIGURE|PICTURE|IMG|SVG|VIDEO)$/.test(c.tagName)
      if (generator) { c.contentEditable = 'false'; frozen.push(c); continue }
      walk(c)
    }
  }
  walk(block)
  return () => { for (const el of frozen) el.removeAttribute('contenteditable') }
}

/**
 * Puts the caret in a block's text: at the end of its last text that is not inside a link, so Tab
 * into a block lets the editor type at once.
 */
export function placeCaret (block: Element): void {
  const texts = pieces(block).filter(p => p.node instanceof Text && p.node.data.trim() !== '' && p.node.parentElement?.closest('a') === null)
  const last = texts[texts.length - 1]
  const range = document.createRange()
  if (last === undefined) {
    range.selectNodeContents(block)
    range.collapse(false)
  } else {
    const node = last.node as Text
    range.setStart(node, node.data.replace(/\s+$/, '').length)
    range.collapse(true)
  }
  select(range)
}
