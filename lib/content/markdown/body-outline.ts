/**
 * What block editing keeps of one parsed body (CONTRACT 14): top-level ranges, definition labels,
 * first emphasis markers and the block list, so an edit parses only its top-level node (region-parse.ts).
 */
import type { Root } from 'mdast'
import { visit } from 'unist-util-visit'
import { sourceBlocks, type SourceBlock } from './block-list.js'
import { firstMarkers, type DocumentMarkers } from './document-context.js'
import { parseSourceHint } from './source-hint.js'

/** A top-level node's kind and source range. */
export interface TopNode { type: string, start: number, end: number }

/** A link or footnote definition: its normalized label and a one-line definition of that label. */
export interface DefinitionLabel { identifier: string, line: string, start: number }

/** One body's outline. */
export interface BodyOutline {
  tops: TopNode[]
  labels: DefinitionLabel[]
  markers: DocumentMarkers
  /** The answer of `GET /blocks`. */
  blocks: SourceBlock[]
}

/**
 * The outline of a fully parsed body.
 * @param tree the body's tree
 * @param body the body
 * @returns the outline
 */
export function outlineOf (tree: Root, body: string): BodyOutline {
  return {
    tops: tree.children.map(c => ({ type: c.type, start: c.position?.start.offset ?? 0, end: c.position?.end.offset ?? 0 })),
    labels: definitionLabels(tree),
    markers: firstMarkers(tree, body, {}),
    blocks: sourceBlocks(tree, body)
  }
}

/**
 * The outline after an edit inside one top-level node: the nodes before it unchanged, that node's
 * from its new parse, the ones after it moved by the change in length.
 * @param outline the outline of `before`
 * @param before the body before the edit
 * @param after the body after it
 * @param index the edited top-level node's index in `outline.tops`
 * @param region the new parse of that node alone (positions in `after`'s offsets)
 * @returns the outline of `after`
 */
export function outlineAfterEdit (outline: BodyOutline, before: string, after: string, index: number, region: Root): BodyOutline {
  const top = outline.tops[index]
  if (top === undefined) throw new Error('no such top-level node')
  const delta = after.length - before.length
  const moved = (offset: number): number => offset >= top.end ? offset + delta : offset
  const blocks: SourceBlock[] = outline.blocks.filter(b => blockStart(b) < top.start)
  blocks.push(...sourceBlocks(region, after))
  for (const block of outline.blocks) {
    const hint = parseSourceHint(block.src)
    if (hint === null || hint.start < top.end) continue
    blocks.push({ ...block, src: `${hint.start + delta}:${hint.end + delta}:${hint.hash}` })
  }
  const regionMarkers = firstMarkers(region, after, {})
  return {
    tops: outline.tops.map((t, i) => i === index ? { ...t, end: t.end + delta } : { ...t, start: moved(t.start), end: moved(t.end) }),
    labels: outline.labels.map(l => ({ ...l, start: moved(l.start) })),
    markers: { emphasis: outline.markers.emphasis ?? regionMarkers.emphasis, strong: outline.markers.strong ?? regionMarkers.strong },
    blocks
  }
}

function blockStart (block: SourceBlock): number {
  return parseSourceHint(block.src)?.start ?? 0
}

/** Every link and footnote definition of the tree, as a one-line definition of its label. */
function definitionLabels (tree: Root): DefinitionLabel[] {
  const out: DefinitionLabel[] = []
  visit(tree, (node) => {
    if (node.type !== 'definition' && node.type !== 'footnoteDefinition') return
    const label = node.label ?? node.identifier
    out.push({ identifier: node.identifier, line: node.type === 'definition' ? `[${label}]: #` : `[^${label}]: x`, start: node.position?.start.offset ?? 0 })
  })
  return out
}
