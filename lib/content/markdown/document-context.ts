/**
 * What editing one block needs of the rest of its document: the definitions its references resolve
 * to, and the emphasis and strong markers the document uses (edits are written in its style).
 */
import type { Root, Definition, FootnoteDefinition, Nodes } from 'mdast'
import { visit } from 'unist-util-visit'

/** The document's first emphasis and strong markers (undefined when it has none). */
export interface DocumentMarkers {
  emphasis?: '*' | '_'
  strong?: '*' | '_'
}

/** The document around a block. */
export interface DocumentContext {
  /** The top-level link and footnote definitions, in document order (to render a block alone). */
  definitions: Array<Definition | FootnoteDefinition>
  /** Every link definition, at any depth, in document order. */
  linkDefinitions: Definition[]
  /** The document's first markers; computed on first call (a walk of the whole tree). */
  markers: () => DocumentMarkers
}

/**
 * The context of a fully parsed body.
 * @param tree the body's tree
 * @param body the body
 * @returns the context
 */
export function treeContext (tree: Root, body: string): DocumentContext {
  const linkDefinitions: Definition[] = []
  visit(tree, 'definition', (node) => { linkDefinitions.push(node) })
  return {
    definitions: tree.children.filter(c => c.type === 'definition' || c.type === 'footnoteDefinition'),
    linkDefinitions,
    markers: () => firstMarkers(tree, body, {})
  }
}

/**
 * Adds the first emphasis and strong markers of a tree to those already found.
 * @param tree the tree, positions in body offsets
 * @param body the body
 * @param found the markers found so far (kept)
 * @returns `found`, completed
 */
export function firstMarkers (tree: Nodes, body: string, found: DocumentMarkers): DocumentMarkers {
  visit(tree, (node) => {
    const offset = node.position?.start.offset
    if (offset === undefined) return
    if (node.type === 'emphasis') found.emphasis ??= body[offset] === '_' ? '_' : '*'
    if (node.type === 'strong') found.strong ??= body[offset] === '_' ? '_' : '*'
  })
  return found
}

/** The markers and link definitions of a document. */
export interface DocumentStyle {
  emphasis: '*' | '_'
  strong: '*' | '_'
  /** Link definitions by URL (the first one for each), for writing links as references. */
  definitions: Map<string, Definition>
}

/**
 * The style for one block: its own markers first, then the document's (looked up only for a kind
 * the edit writes and the block lacks).
 * @param writes whether the edited content has emphasis and strong
 */
export function blockStyle (block: Nodes, body: string, document: DocumentContext, writes: { emphasis: boolean, strong: boolean }): DocumentStyle {
  const own = firstMarkers(block, body, {})
  const needs = (writes.emphasis && own.emphasis === undefined) || (writes.strong && own.strong === undefined)
  const doc = needs ? document.markers() : {}
  const definitions = new Map<string, Definition>()
  for (const node of document.linkDefinitions) if (!definitions.has(node.url)) definitions.set(node.url, node)
  return { emphasis: own.emphasis ?? doc.emphasis ?? '*', strong: own.strong ?? doc.strong ?? '*', definitions }
}
