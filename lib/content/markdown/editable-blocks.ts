/**
 * Which nodes of a Markdown tree carry a source hint, one hint never covering another's text: each
 * top-level block, list item, and an item's or quote's children when it holds more than a paragraph;
 * and the unified plugin pair that marks them, for sites that render with remark and rehype.
 */
import type { Nodes, Root, Paragraph, Heading } from 'mdast'
import type { Root as HastRoot, Element } from 'hast'
import type { VFile } from 'vfile'
import { formatSourceHint } from './source-hint.js'

// MDX's ESM, expressions and JSX elements are code, never edited in place.
const NOT_BLOCKS = new Set(['html', 'definition', 'footnoteDefinition', 'yaml', 'toml', 'mdxjsEsm', 'mdxFlowExpression', 'mdxJsxFlowElement'])

/** A block node as blockUnits reads it: mdast's, or markdown-it-outline.ts's. */
interface UnitNode { type: string, children?: UnitNode[], spread?: boolean | null }

/** The block units of a top-level node in document order, editable or not (see above). */
export function blockUnits<N extends UnitNode> (node: N, tightItemFirst = false, looseList?: boolean): Array<{ node: N, asSpan: boolean, looseList?: boolean }> {
  const children = (node.children ?? []) as N[]
  if (node.type === 'yaml') return []
  if (node.type === 'list') {
    const loose = node.spread === true || children.some(item => item.spread === true)
    return children.flatMap(item => blockUnits(item, false, loose))
  }
  if (node.type === 'listItem' || node.type === 'blockquote') {
    const single = children.length === 0 || (children.length === 1 && children[0]?.type === 'paragraph')
    if (single) return [{ node, asSpan: false, looseList }]
    const tight = node.type === 'listItem' && node.spread !== true
    return children.flatMap((child, i) => blockUnits(child, tight && i === 0 && child.type === 'paragraph'))
  }
  return [{ node, asSpan: tightItemFirst }]
}

/**
 * The paragraph or heading holding an editable block's inline content (null: code, table, rule).
 * @param node the block
 * @returns its paragraph or heading, or null
 */
export function inlineHost (node: Nodes): Paragraph | Heading | null {
  if (node.type === 'paragraph' || node.type === 'heading') return node
  if (node.type === 'listItem' || node.type === 'blockquote') {
    const first = node.children[0]
    if (first?.type === 'paragraph') return first
  }
  return null
}

/**
 * Whether a block is MDX ESM, JSX or an expression (or a template tag) rather than prose.
 * @param node the block
 * @returns true when the block must never be edited in place
 */
export function isCode (node: Nodes): boolean {
  const host = inlineHost(node)
  const first = host?.children[0]
  if (first === undefined) return false
  if ((first.type as string) === 'mdxJsxTextElement' || (first.type as string) === 'mdxTextExpression') return true
  // A JSX tag whose attributes are not HTML's (`<Tabs items={['a']}>`) is text, not raw HTML.
  if (first.type === 'text') return /^(?:(?:import|export)[ \t{*]|\{|<\/?[A-Z])/.test(first.value)
  if (first.type === 'html') return /^<\/?(?:[A-Z]|>)/.test(first.value)
  return false
}

/** What `rehypeCmsSource` needs to name the field. */
export interface CmsSourceOptions {
  collection: string
  id: string
  /** The field holding the Markdown (default `body`). */
  blockPath?: string
}

interface HastData { hName?: string, hProperties?: Record<string, unknown> }

/**
 * remark plugin: adds `data-cms-src` to every editable block (the file's text must be the stored body).
 * @returns the transformer
 */
export function remarkCmsSource () {
  return (tree: Root, file: VFile): void => {
    const body = String(file.value)
    for (const unit of tree.children.flatMap(child => blockUnits(child))) {
      const start = unit.node.position?.start.offset
      const end = unit.node.position?.end.offset
      if (NOT_BLOCKS.has(unit.node.type) || isCode(unit.node) || start === undefined || end === undefined || start >= end) continue
      const node = unit.node as { data?: HastData }
      const data: HastData = node.data ?? {}
      data.hProperties = { ...data.hProperties, dataCmsSrc: formatSourceHint(body, start, end) }
      if (unit.asSpan) data.hName = 'span'
      node.data = data
    }
  }
}

/**
 * rehype plugin: wraps the document in `<div data-cms-md="<collection>/<id>#<blockPath>">`.
 * @param options the entry and field
 * @returns the transformer
 */
export function rehypeCmsSource (options: CmsSourceOptions) {
  const name = `${options.collection}/${options.id}#${options.blockPath ?? 'body'}`
  return (tree: HastRoot): void => {
    const wrapper: Element = { type: 'element', tagName: 'div', properties: { dataCmsMd: name }, children: tree.children as Element['children'] }
    tree.children = [wrapper]
  }
}
