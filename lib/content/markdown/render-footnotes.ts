/**
 * The footnotes section of a chunked rendering (see render-chunks.ts), rendered apart from the
 * segments: remark-rehype builds it from the document's footnote definitions, the order in which
 * the document first refers to each and how often it does. The segments have counted those; here
 * the definitions are parsed (the chunks holding them, after the link definitions they may use)
 * and remark-rehype starts from the counted state, so the section is the whole render's.
 */
import { unified } from 'unified'
import remarkRehype, { defaultHandlers } from 'remark-rehype'
import { toHtml } from 'hast-util-to-html'
import { fromHtml } from 'hast-util-from-html'
import type { Root as HastRoot, Element } from 'hast'
import type { Root as MdastRoot } from 'mdast'
import type { State, Handler } from 'mdast-util-to-hast'
import { sanitizeTree } from './render.js'
import { parseSegmentText, fragmentsOf, relinkFragments, SegmentFallback } from './render-segment.js'

/** The footnotes section, sanitized, before its in-page links are settled. */
export interface SanitizedFootnotes {
  /** The wrapper element whose children are `\n` and the section. */
  wrapper: Element
  /** The ids the section defines (sanitized). */
  ids: string[]
  /** Targets of its in-page links (back references included), in document order. */
  fragments: string[]
}

/** The footnotes section as kept: `\n<section ...>...</section>`. */
export interface RenderedFootnotes {
  html: string
  ids: string[]
  fragments: string[]
  relinked: boolean[]
}

/**
 * Renders the footnotes section.
 * @param texts the chunks holding footnote definitions, in document order
 * @param definitions link definition texts they may use (each standing alone)
 * @param order the footnote identifiers (upper case) in the order the document first refers to them
 * @param counts how many references the document makes to each
 * @returns the sanitized section
 */
export function sanitizeFootnotes (texts: string[], definitions: string[], order: string[], counts: Map<string, number>): SanitizedFootnotes {
  const parsed = parseSegmentText(texts.join('\n\n'), definitions)
  const mdast: MdastRoot = {
    type: 'root',
    children: [...parsed.definitions, ...parsed.own.filter(n => n.type === 'definition' || n.type === 'footnoteDefinition')]
  }
  const root = (state: State, node: MdastRoot): ReturnType<typeof defaultHandlers.root> => {
    state.footnoteOrder.push(...order)
    for (const [id, count] of counts) state.footnoteCounts.set(id, count)
    return defaultHandlers.root(state, node)
  }
  const toHast = unified().use(remarkRehype, { allowDangerousHtml: true, clobberPrefix: '', handlers: { root: root as Handler } })
  const hast = toHast.runSync(mdast) as HastRoot
  const tree = sanitizeTree(fromHtml('<div>' + toHtml(hast, { allowDangerousHtml: true }) + '</div>', { fragment: true }))
  const wrapper = tree.children[0]
  if (tree.children.length !== 1 || wrapper?.type !== 'element') throw new SegmentFallback('the footnotes left their wrapper')
  const ids: string[] = []
  for (const node of walk(wrapper)) if (typeof node.properties.id === 'string') ids.push(node.properties.id)
  return { wrapper, ids, fragments: fragmentsOf(wrapper) }
}

/**
 * Settles the section's in-page links against the page's ids and serializes it.
 * @param footnotes the sanitized section (its tree is changed)
 * @param pageIds every id of the page
 * @returns the section as kept
 */
export function serializeFootnotes (footnotes: SanitizedFootnotes, pageIds: Set<string>): RenderedFootnotes {
  const relinked = relinkFragments(footnotes.wrapper, pageIds)
  return { html: toHtml(footnotes.wrapper.children), ids: footnotes.ids, fragments: footnotes.fragments, relinked }
}

function * walk (node: Element): Generator<Element> {
  yield node
  for (const child of node.children) if (child.type === 'element') yield * walk(child)
}
