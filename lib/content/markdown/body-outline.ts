/**
 * What block editing keeps of one parsed body (CONTRACT 14), so that an edit parses only its top-level
 * node (with the definitions it names), or the whole body when the edit changed the node's kind or extent.
 */
import type { Root, Nodes } from 'mdast'
import { visit } from 'unist-util-visit'
import { shiftPositions, definitionsNamedIn, writtenDefinition, type BodyParser } from './parse-body.js'
import { sourceBlocks } from './block-list.js'
import { parseSourceHint } from './source-hint.js'
import type { SourceBlock } from '../../api-shapes.js'

/** A top-level node's kind and source range. */
export interface TopNode { type: string, start: number, end: number }

/** A link or footnote definition: its normalized label and a one-line definition of that label. */
export interface DefinitionLabel { identifier: string, line: string, start: number }

/** The document's first emphasis and strong markers (undefined when it has none). */
export interface DocumentMarkers {
  emphasis?: '*' | '_'
  strong?: '*' | '_'
}

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
  // Each link and footnote definition as a one-line definition of its label.
  const labels: DefinitionLabel[] = []
  visit(tree, (node) => {
    if (node.type !== 'definition' && node.type !== 'footnoteDefinition') return
    labels.push({ identifier: node.identifier, line: writtenDefinition(node, body), start: node.position?.start.offset ?? 0 })
  })
  return {
    tops: tree.children.map(c => ({ type: c.type, start: c.position?.start.offset ?? 0, end: c.position?.end.offset ?? 0 })),
    labels,
    markers: firstMarkers(tree, body, {}),
    blocks: sourceBlocks(tree, body)
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

/**
 * The outline after an edit inside one top-level node, that node's part from its new parse.
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
  const blocks: SourceBlock[] = outline.blocks.filter(b => (parseSourceHint(b.src)?.start ?? 0) < top.start)
  blocks.push(...sourceBlocks(region, after))
  for (const block of outline.blocks) {
    const hint = parseSourceHint(block.src)
    if (hint === null || hint.start < top.end) continue
    blocks.push({ ...block, src: `${hint.start + delta}:${hint.end + delta}:${hint.hash}` })
  }
  return {
    tops: outline.tops.map((t, i) => i === index ? { ...t, end: t.end + delta } : { ...t, start: moved(t.start), end: moved(t.end) }),
    labels: outline.labels.map(l => ({ ...l, start: moved(l.start) })),
    markers: firstMarkers(region, after, { ...outline.markers }),
    blocks
  }
}

/** A parser of the edited node, and which node it is. */
interface RegionParser {
  /** Parses a body that differs from the outlined one only inside the node (the node alone when it can). */
  parse: BodyParser
  /** The node alone in such a body, or null when it does not parse alone as it did (then parse the whole body). */
  parseNode: (text: string) => Root | null
  /** The node's index among the body's top-level nodes (-1: none; `parse` parses whole bodies). */
  index: number
}

/**
 * A parser for bodies that differ from `body` only inside the top-level node holding offset `at`.
 * @param outline the body's outline
 * @param body the body
 * @param at an offset inside the edited block
 * @param parse the body's parser
 * @returns a parser giving a root whose children are that node alone (or the whole body's)
 */
export function regionParser (outline: BodyOutline, body: string, at: number, parse: BodyParser): RegionParser {
  const index = outline.tops.findIndex(t => t.start <= at && at < t.end)
  const top = outline.tops[index]
  if (top === undefined) return { parse, parseNode: () => null, index: -1 }
  const { start, end } = top
  const labels = outline.labels.filter(l => l.start < start || l.start >= end)
  const parseNode = (text: string): Root | null => {
    const regionEnd = end + text.length - body.length
    if (regionEnd <= start || !text.startsWith(body.slice(0, start)) || !text.endsWith(body.slice(end))) return null
    const region = text.slice(start, regionEnd)
    const definitions = [...new Set(definitionsNamedIn(region, labels).map(l => l.line))].join('\n\n')
    // The region alone must parse into one whole node of the kind it was.
    const parsed = parse(definitions === '' ? region : `${region}\n\n${definitions}`)
    const own = parsed.children.filter(c => (c.position?.start.offset ?? 0) < region.length)
    const node = own[0]
    if (own.length !== 1 || node?.type !== top.type || node.position?.start.offset !== 0 || node.position.end.offset !== region.length) return null
    shiftPositions(node, start)
    return { type: 'root', children: [node] }
  }
  return { index, parseNode, parse: (text) => parseNode(text) ?? parse(text) }
}
