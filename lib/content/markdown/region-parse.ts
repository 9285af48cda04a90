/**
 * Parsing only the top-level block an edit falls in, for the edit's read-back checks: an edit stays
 * inside one block, so the body after it differs from the body before only within that block's
 * top-level node. That node's source is parsed alone (positions moved to body offsets), with the
 * document's link and footnote definitions it names written after it so its references resolve as
 * in the whole body. When the node does not parse alone into one node of its own kind and extent
 * (the edit changed the document's structure), the whole body is parsed instead.
 */
import type { Root, RootContent } from 'mdast'
import { visit } from 'unist-util-visit'
import type { BodyParser } from './parse-body.js'

interface Label { identifier: string, line: string, start: number }

/**
 * A parser for bodies that differ from `body` only inside the top-level node holding offset `at`.
 * @param tree the parsed body
 * @param body the body
 * @param at an offset inside the edited block
 * @param parse the body's parser
 * @returns a parser giving a root whose children are that node alone (or the whole body's)
 */
export function regionParser (tree: Root, body: string, at: number, parse: BodyParser): BodyParser {
  const top = tree.children.find(c => (c.position?.start.offset ?? 0) <= at && at < (c.position?.end.offset ?? 0))
  const start = top?.position?.start.offset
  const end = top?.position?.end.offset
  if (top === undefined || start === undefined || end === undefined) return parse
  let labels: Label[] | undefined
  return (text) => {
    const delta = text.length - body.length
    const regionEnd = end + delta
    if (regionEnd <= start || !sameOutside(body, text, start, end, regionEnd)) return parse(text)
    const region = text.slice(start, regionEnd)
    labels ??= definitionLabels(tree, start, end)
    const node = parseAlone(region, trailer(region, labels), parse)
    if (node === null || node.type !== top.type) return parse(text)
    shift(node, start)
    return { type: 'root', children: [node], position: tree.position }
  }
}

/** Whether `text` equals `body` outside the region (before `start`, and after it). */
function sameOutside (body: string, text: string, start: number, end: number, regionEnd: number): boolean {
  return text.startsWith(body.slice(0, start)) && text.endsWith(body.slice(end)) && text.length - regionEnd === body.length - end
}

/** The region's one node, or null when it parses into more or less than one whole node. */
function parseAlone (region: string, definitions: string, parse: BodyParser): RootContent | null {
  const parsed = parse(definitions === '' ? region : `${region}\n\n${definitions}`)
  const own = parsed.children.filter(c => (c.position?.start.offset ?? 0) < region.length)
  const node = own[0]
  if (own.length !== 1 || node === undefined) return null
  if (node.position?.start.offset !== 0 || node.position.end.offset !== region.length) return null
  return node
}

/** Every link and footnote definition outside the node, as a one-line definition of its label. */
function definitionLabels (tree: Root, start: number, end: number): Label[] {
  const out: Label[] = []
  visit(tree, (node) => {
    if (node.type !== 'definition' && node.type !== 'footnoteDefinition') return
    const offset = node.position?.start.offset ?? 0
    if (offset >= start && offset < end) return
    const label = node.label ?? node.identifier
    out.push({ identifier: node.identifier, line: node.type === 'definition' ? `[${label}]: #` : `[^${label}]: x`, start: offset })
  })
  return out
}

/** The definitions whose labels the region may name (its text, normalized as labels are, holds the label). */
function trailer (region: string, labels: Label[]): string {
  if (labels.length === 0) return ''
  const normalized = region.replace(/[\t\n\r ]+/g, ' ').toLowerCase().toUpperCase().toLowerCase()
  return labels.filter(l => normalized.includes(l.identifier)).map(l => l.line).join('\n\n')
}

/** Moves every position of a subtree by `by` characters. */
function shift (node: RootContent, by: number): void {
  visit(node, (n) => {
    const { position } = n
    if (position?.start.offset === undefined || position.end.offset === undefined) return
    // New points: a parser may share one point between nodes.
    n.position = { start: { ...position.start, offset: position.start.offset + by }, end: { ...position.end, offset: position.end.offset + by } }
  })
}
