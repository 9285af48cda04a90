/**
 * The Markdown style a document already uses, so edited blocks are written the same way.
 */
import type { Definition, Nodes } from 'mdast'
import { firstMarkers, type DocumentContext } from './document-context.js'

/** The markers and link definitions of a document. */
export interface DocumentStyle {
  emphasis: '*' | '_'
  strong: '*' | '_'
  /** Link definitions by URL (the first one for each), for writing links as references. */
  definitions: Map<string, Definition>
}

/**
 * The style for one block: its own markers first, then the document's. The document's markers are
 * looked up only for a kind the edit writes and the block does not already have.
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
