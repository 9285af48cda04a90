/** The source blocks of a body, for the editor to pair with a generator's rendered blocks (CONTRACT 14). */
import type { Root, RootContent, Nodes } from 'mdast'
import type {} from 'mdast-util-mdx'
import { fromHtml } from 'hast-util-from-html'
import { visit } from 'unist-util-visit'
import { blockUnits, inlineHost, isCode } from './editable-blocks.js'
import { plainText } from './block-chars.js'
import { formatSourceHint } from './source-hint.js'
import type { BlockKind, SourceBlock } from '../../api-shapes.js'

/** A block with its node (for the edit). */
export interface ListedBlock extends SourceBlock {
  node: RootContent
  start: number
  end: number
  /** For a list item, whether its list renders loose (its paragraphs in `<p>`). */
  looseList?: boolean
}

/** The block kind of each node type that has one (anything else lists as `html`). */
const KINDS: Record<string, BlockKind> = {
  paragraph: 'paragraph', heading: 'heading', code: 'code', table: 'table', html: 'html', thematicBreak: 'thematicBreak', listItem: 'listItem',
  blockquote: 'blockquote', definition: 'definition', footnoteDefinition: 'definition', mdxjsEsm: 'mdx', mdxJsxFlowElement: 'mdx', mdxFlowExpression: 'mdx'
}

/**
 * Lists the blocks of a parsed body.
 * @param tree the body's tree (positions required)
 * @param body the body
 * @param at only the blocks starting at this offset
 * @returns the blocks, in document order
 */
export function listBlocks (tree: Root, body: string, at?: number): ListedBlock[] {
  const out: ListedBlock[] = []
  for (const child of tree.children) {
    const start = child.position?.start.offset ?? 0
    const end = child.position?.end.offset ?? 0
    if (at !== undefined && (start > at || at >= end)) continue
    for (const unit of blockUnits(child)) push(unit, body, out, at)
  }
  return out
}

/**
 * The answer of `GET /blocks`: the blocks without their nodes.
 * @param tree the body's tree
 * @param body the body
 * @returns the blocks
 */
export function sourceBlocks (tree: Root, body: string): SourceBlock[] {
  return listBlocks(tree, body).map(({ src, kind, depth, text, editable }) => ({ src, kind, ...(depth !== undefined ? { depth } : {}), text, editable }))
}

function push ({ node, looseList }: { node: RootContent, looseList?: boolean }, body: string, out: ListedBlock[], at: number | undefined): void {
  const start = node.position?.start.offset
  const end = node.position?.end.offset
  if (start === undefined || end === undefined || start >= end || (at !== undefined && start !== at)) return
  // A paragraph MDX or a template language reads as code (an import, a JSX tag, `{{< x >}}`).
  const kind = inlineHost(node) !== null && isCode(node) ? 'mdx' : KINDS[node.type] ?? 'html'
  out.push({ node, start, end, looseList, ...sourceBlock(body, start, end, kind, node.type === 'heading' ? node.depth : undefined, textOf(node, body)) })
}

/**
 * One block of `GET /blocks` (prose is editable: paragraphs, headings, list items, quotes).
 * @param body the body
 * @param start the block's start offset
 * @param end its end offset
 * @param kind its kind (`mdx` for a paragraph that reads as code)
 * @param depth a heading's depth
 * @param text what a reader sees of it
 * @returns the block
 */
export function sourceBlock (body: string, start: number, end: number, kind: BlockKind, depth: number | undefined, text: string): SourceBlock {
  const editable = kind === 'paragraph' || kind === 'heading' || kind === 'listItem' || kind === 'blockquote'
  return { src: formatSourceHint(body, start, end), kind, ...(depth !== undefined ? { depth } : {}), text, editable }
}

function textOf (node: RootContent, body: string): string {
  if (node.type === 'html') return htmlText(node.value)
  if (node.type === 'code') return node.value
  const host = inlineHost(node as Nodes)
  return readerText(plainText(host ?? node, body))
}

/**
 * Whitespace as a reader sees it: runs collapsed to one space, none around a line break, ends trimmed.
 * @param text the text
 * @returns the text as read
 */
export function readerText (text: string): string {
  return text.replace(/[ \t\r\f]+/g, ' ').replace(/ ?\n ?/g, '\n').trim()
}

/**
 * The text a browser shows for a raw HTML block (script and style content left out).
 * @param html the block's HTML
 * @returns its text
 */
export function htmlText (html: string): string {
  let text = ''
  visit(fromHtml(html, { fragment: true }), (node, _i, parent) => {
    if (node.type !== 'text') return
    if (parent?.type === 'element' && (parent.tagName === 'script' || parent.tagName === 'style')) return
    text += node.value
  })
  return text.replace(/\s+/g, ' ').trim()
}
