/**
 * The Markdown style a document already uses, so edited blocks are written the same way.
 */
import type { Root, Definition, Nodes } from 'mdast'
import { visit } from 'unist-util-visit'

/** The markers and link definitions of a document. */
export interface DocumentStyle {
  emphasis: '*' | '_'
  strong: '*' | '_'
  /** Link definitions by URL (the first one for each), for writing links as references. */
  definitions: Map<string, Definition>
}

/**
 * The style for one block: its own markers first, then the document's.
 * @param tree the parsed body
 * @param body the body text
 * @param block the block's node
 * @returns the style
 */
export function blockStyle (tree: Root, body: string, block: Nodes): DocumentStyle {
  const own = styleOf(block, body, null)
  return styleOf(tree, body, { emphasis: hasNode(block, 'emphasis') ? own.emphasis : undefined, strong: hasNode(block, 'strong') ? own.strong : undefined })
}

function hasNode (tree: Nodes, type: string): boolean {
  let found = false
  visit(tree, type, () => { found = true })
  return found
}

function styleOf (tree: Nodes, body: string, preset: { emphasis?: '*' | '_', strong?: '*' | '_' } | null): DocumentStyle {
  let emphasis: '*' | '_' | undefined = preset?.emphasis
  let strong: '*' | '_' | undefined = preset?.strong
  const definitions = new Map<string, Definition>()
  visit(tree, (node) => {
    const offset = node.position?.start.offset
    if (node.type === 'emphasis' && emphasis === undefined && offset !== undefined) emphasis = body[offset] === '_' ? '_' : '*'
    if (node.type === 'strong' && strong === undefined && offset !== undefined) strong = body[offset] === '_' ? '_' : '*'
    if (node.type === 'definition' && !definitions.has(node.url)) definitions.set(node.url, node)
  })
  return { emphasis: emphasis ?? '*', strong: strong ?? '*', definitions }
}
