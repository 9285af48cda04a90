/**
 * Sanitized inline HTML as a flat list of tokens (tags, words, other characters, whitespace runs),
 * the unit of inline-splice.ts's diff; keys compare what a reader sees.
 */
import type { Root, ElementContent, Element } from 'hast'

/** One token: its key and what it came from. */
export interface InlineToken {
  /** What compares: a word, a character, `' '`, or a tag key (starting with TAG). */
  key: string
  /** The element of a tag token (for rebuilding a fragment). */
  element?: Element
  /** `open`, `close` or `void` for tag tokens. */
  tag?: 'open' | 'close' | 'void'
}

/** Tag keys start with this character, which text keys never hold. */
export const TAG = '\u0001'

const BR = TAG + 'br'

const WORDS = /[\p{L}\p{N}\p{M}]+|[ \t\n\r\f]+|[^]/gu

/**
 * Tokenizes a sanitized fragment.
 * @param root the fragment (from sanitizeInlineHtml)
 * @param split a character in the text that ends one token list and starts the next
 * @returns the token lists (one without `split`), leading and trailing whitespace kept
 */
export function inlineTokens (root: Root, split?: string): InlineToken[][] {
  const lists: InlineToken[][] = [[]]
  const push = (token: InlineToken): void => { lists[lists.length - 1]?.push(token) }
  const text = (value: string): void => {
    const parts = split === undefined ? [value] : value.split(split)
    parts.forEach((part, i) => {
      if (i > 0) lists.push([])
      for (const m of part.matchAll(WORDS)) push({ key: /^[ \t\n\r\f]/.test(m[0]) ? ' ' : m[0] })
    })
  }
  const walk = (nodes: ElementContent[]): void => {
    // Adjacent text nodes read as one text, as in a parsed document.
    let pending = ''
    for (const node of nodes) {
      if (node.type === 'text') { pending += node.value; continue }
      if (pending !== '') { text(pending); pending = '' }
      if (node.type === 'element') {
        if (node.tagName === 'br' || node.tagName === 'img') {
          push({ key: TAG + tagKey(node), element: node, tag: 'void' })
        } else if (node.tagName === 'a' && node.properties.dataFootnoteRef === true) {
          push({ key: TAG + 'fn:' + footnoteLabel(node), element: node, tag: 'void' })
        } else {
          push({ key: TAG + tagKey(node), element: node, tag: 'open' })
          walk(node.children)
          push({ key: TAG + '/' + node.tagName, element: node, tag: 'close' })
        }
      }
    }
    if (pending !== '') text(pending)
  }
  walk(root.children as ElementContent[])
  return lists
}

/**
 * A token list as a browser shows it (whitespace merged, dropped at the ends and around line breaks).
 * @param tokens the tokens
 * @returns the visible tokens
 */
export function visibleTokens<T extends { key: string }> (tokens: T[]): T[] {
  const out: T[] = []
  for (const token of tokens) {
    const previous = out[out.length - 1]?.key
    if (token.key === ' ' && (previous === undefined || previous === ' ' || previous === BR)) continue
    // Whitespace around a line break does not show.
    if (token.key === BR && previous === ' ') out.pop()
    out.push(token)
  }
  if (out[out.length - 1]?.key === ' ') out.pop()
  return out
}

/**
 * Whether two token lists show the same.
 * @param a tokens
 * @param b tokens
 * @returns true when their keys are equal, in order
 */
export function sameKeys (a: Array<{ key: string }>, b: Array<{ key: string }>): boolean {
  return a.length === b.length && a.every((t, i) => t.key === b[i]?.key)
}

function tagKey (node: Element): string {
  const props = Object.entries(node.properties).filter(([, v]) => v !== undefined && v !== null && v !== false)
    .sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
  return node.tagName + (props.length === 0 ? '' : JSON.stringify(props))
}

/**
 * A footnote reference's label, from its href (`#user-content-fn-<label>` or `#fn-<label>`).
 * @param node the reference's `a` element
 * @returns the label
 */
export function footnoteLabel (node: Element): string {
  const href = String(node.properties.href ?? '')
  const label = href.replace(/^#(?:user-content-)?fn-/, '')
  try {
    return decodeURIComponent(label)
  } catch {
    return label
  }
}
