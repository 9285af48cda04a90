/**
 * The blocks a generator rendered in a `[data-cms-md]` element, in page order, and their text as a
 * reader sees it, without nested blocks or the generator's additions (permalinks, footnote marks).
 */

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

/**
 * Whether an element is generator markup inside an author's block (not the author's text):
 * a heading's permalink, a footnote reference or back-link, something hidden from readers.
 */
export function isGeneratorMarkup (el: Element): boolean {
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
export function walkOwnText (block: Element, visit: (node: Text | HTMLBRElement) => void): void {
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
  let text = ''
  walkOwnText(block, (n) => { text += n instanceof HTMLBRElement ? '\n' : spaced(n.data) })
  return text
}

/** A text node's text with no-break spaces as spaces (a browser types one at the end of a text). */
export function spaced (data: string): string {
  return data.replace(/\u00a0/g, ' ')
}

/** Whether the element holds words (or an image) of its own, outside nested blocks. */
function hasOwnContent (el: Element): boolean {
  let found = false
  walkOwnText(el, (n) => { if (!found && n instanceof Text && n.data.trim() !== '') found = true })
  return found || (el.tagName === 'P' && el.querySelector('img, picture, svg, video') !== null)
}

/** The blocks of a rendered Markdown element, in page order. */
export function pageBlocks (root: Element, skip: (el: Element) => boolean = () => false): HTMLElement[] {
  const out: HTMLElement[] = []
  const walk = (el: Element): void => {
    for (let c = el.firstElementChild; c !== null; c = c.nextElementSibling) {
      if (!(c instanceof HTMLElement) || SKIPPED.has(c.tagName) || isFootnoteSection(c) || skip(c)) continue
      if (!BLOCKY.has(c.tagName)) { walk(c); continue }
      if (ATOMIC.has(c.tagName)) { out.push(c); continue }
      if (hasOwnContent(c)) out.push(c)
      walk(c)
    }
  }
  walk(root)
  return out
}
