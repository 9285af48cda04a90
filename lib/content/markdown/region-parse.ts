/**
 * Parsing only the top-level node an edit falls in (an edit stays in one block), with the definitions
 * it names written after it; when it does not parse alone into one node of its kind and extent (the
 * edit changed the document's structure), the whole body is parsed instead.
 */
import type { Root, RootContent } from 'mdast'
import { shiftPositions, definitionsNamedIn, type BodyParser } from './parse-body.js'
import type { BodyOutline } from './body-outline.js'

/** A parser of the edited node, and which node it is. */
export interface RegionParser {
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
    if (regionEnd <= start || !sameOutside(body, text, start, end)) return null
    const region = text.slice(start, regionEnd)
    const node = parseAlone(region, definitionsNamedIn(region, labels).join('\n\n'), parse)
    if (node === null || node.type !== top.type) return null
    shiftPositions(node, start)
    return { type: 'root', children: [node] }
  }
  return { index, parseNode, parse: (text) => parseNode(text) ?? parse(text) }
}

/** Whether `text` equals `body` before `start` and after `end` (moved by the change in length). */
function sameOutside (body: string, text: string, start: number, end: number): boolean {
  return text.startsWith(body.slice(0, start)) && text.endsWith(body.slice(end))
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
