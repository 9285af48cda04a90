/**
 * What a reader sees of a sanitized inline fragment, as one string: text with whitespace collapsed as a
 * browser shows it, each element as a key (tag and attributes); two fragments that show the same are equal.
 */
import type { Root, ElementContent, Element } from 'hast'

/** Element keys start with this character and end with TAG_END, which text never holds. */
const TAG = '\u0001'
const TAG_END = '\u0002'

/**
 * The fragment as shown: whitespace runs as one space, dropped at the ends and around line breaks.
 * @param root the fragment (from sanitizeInlineHtml)
 * @returns the text and element keys
 */
export function shownText (root: Root): string {
  let out = ''
  const walk = (nodes: ElementContent[]): void => {
    for (const node of nodes) {
      if (node.type === 'text') out += node.value
      if (node.type !== 'element') continue
      if (node.tagName === 'br' || node.tagName === 'img') {
        out += TAG + tagKey(node) + TAG_END
      } else if (node.tagName === 'a' && node.properties.dataFootnoteRef === true) {
        out += TAG + 'fn:' + footnoteLabel(node) + TAG_END
      } else {
        out += TAG + tagKey(node) + TAG_END
        walk(node.children)
        out += TAG + '/' + node.tagName + TAG_END
      }
    }
  }
  walk(root.children as ElementContent[])
  return out.replace(/[ \t\n\r\f]+/g, ' ').replace(/ ?(\u0001br\u0002) ?/g, '$1').replace(/^ | $/g, '')
}

/**
 * The images and footnote references of a shown text, in order.
 * @param shown a shownText
 * @returns their keys
 */
export function shownAtoms (shown: string): string[] {
  return shown.match(/\u0001(?:img|fn:)[^\u0002]*\u0002/g) ?? []
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
