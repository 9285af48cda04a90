/**
 * `renderInline`: phrasing content rendered as the page has it (renderMarkdown's pipeline and
 * sanitizer), then reduced to the inline allowlist as an edit's HTML is: what the editor starts from.
 */
import { unified } from 'unified'
import remarkRehype from 'remark-rehype'
import { toHtml } from 'hast-util-to-html'
import type { Root as HastRoot, Element } from 'hast'
import type { PhrasingContent, RootContent } from 'mdast'
import { visit, EXIT } from 'unist-util-visit'
import { sanitizeInlineHtml, sanitizeInlineTree } from './inline-sanitize.js'
import { sanitizeRendered, sanitizeRenderedTree } from './render.js'

const toHast = unified().use(remarkRehype, { allowDangerousHtml: true, clobberPrefix: '' }).freeze()

/**
 * Renders phrasing content in a paragraph, with the document's definitions (for references).
 * @param children the content
 * @param definitions the link and footnote definitions
 * @returns the sanitized inline fragment
 */
export function renderInline (children: PhrasingContent[], definitions: RootContent[]): HastRoot {
  const hast = toHast.runSync({ type: 'root', children: [{ type: 'paragraph', children }, ...definitions] }) as HastRoot
  const paragraph = hast.children.find((c): c is Element => c.type === 'element')
  const content: HastRoot = { type: 'root', children: paragraph?.children ?? [] }
  // Raw HTML becomes elements only when parsed, as a browser does; without it the tree is final.
  let raw = false
  visit(content, 'raw', () => { raw = true; return EXIT })
  if (raw) return sanitizeInlineHtml(toHtml(sanitizeRendered(toHtml(content, { allowDangerousHtml: true }))))
  return sanitizeInlineTree(sanitizeRenderedTree(content))
}

/**
 * The definitions some Markdown text may refer to: those whose label occurs in it (labels match
 * case-insensitively with whitespace collapsed, so a reference always holds its label's text).
 * Rendering a block with only these is rendering it with all, and much cheaper in a long document.
 * @param definitions the document's definitions
 * @param text the block's Markdown
 * @returns the definitions to render it with
 */
export function definitionsFor (definitions: RootContent[], text: string): RootContent[] {
  if (definitions.length === 0) return definitions
  const haystack = collapse(text)
  return definitions.filter(d => {
    const label = (d.type === 'definition' || d.type === 'footnoteDefinition') ? (d.label ?? d.identifier) : ''
    return label !== '' && haystack.includes(collapse(label))
  })
}

function collapse (text: string): string {
  return text.replace(/\s+/g, ' ').toLowerCase()
}
