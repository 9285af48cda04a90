/**
 * `blockWindow`: the tree of only the part of a body around one block, so an edit does not parse
 * the whole body. The window is the top-level chunks (see body-chunks.ts) that cover the block,
 * parsed together with the chunks elsewhere that hold link or footnote definitions (references
 * resolve only when the parser sees their definitions); every position is then moved back to body
 * offsets. Each chunk parses alone as in the whole body, so the window's nodes are the body's.
 * Whenever the window cannot be sure to parse as the whole body would, it is null and the caller
 * parses the whole body.
 */
import type { Root, RootContent, Definition, FootnoteDefinition, Nodes } from 'mdast'
import { visit, SKIP } from 'unist-util-visit'
import { bodyChunks, type BodyChunk } from './body-chunks.js'
import type { BodyParser } from './parse-body.js'
import { firstMarkers, type DocumentContext, type DocumentMarkers } from './document-context.js'

/** What an edit needs of the document, from the window instead of the whole tree. */
export interface BlockWindow extends DocumentContext {
  /** The window's nodes, then those of the definition chunks, all in body offsets. */
  tree: Root
}

type AnyDefinition = Definition | FootnoteDefinition

/**
 * Builds the window for the block range [start, end).
 * @param body the body
 * @param start the block's start offset
 * @param end the block's end offset
 * @param parse the parser
 * @returns the window, or null when only the whole body can tell
 */
export function blockWindow (body: string, start: number, end: number, parse: BodyParser): BlockWindow | null {
  if (!(start >= 0 && start < end && end <= body.length)) return null
  const chunks = bodyChunks(body)
  const first = chunks.findIndex(c => c.end > start)
  const last = chunks.findIndex(c => c.end >= end)
  const from = chunks[first]?.start
  const to = chunks[last]?.end
  if (from === undefined || to === undefined) return null
  // Every definition contains `]:`; a chunk without one has none.
  const others = chunks.filter((c, i) => (i < first || i > last) && contains(body, c, ']:'))
  const parts = parseChunks(parse, body, [{ start: from, end: to }, ...others])
  if (parts === null) return null
  const [own = [], ...rest] = parts
  const before = rest.filter((_, i) => (others[i]?.start ?? 0) < from).flat()

  // CommonMark takes a label's first definition: one defined before the window and again in it
  // would resolve differently here, where the window comes first.
  const key = (d: AnyDefinition): string => d.type + ':' + d.identifier
  const earlier = new Set(definitionsOf(before).map(key))
  if (definitionsOf(own).some(d => earlier.has(key(d)))) return null

  const tree: Root = { type: 'root', children: parts.flat() }
  const byOffset = (a: RootContent, b: RootContent): number => (a.position?.start.offset ?? 0) - (b.position?.start.offset ?? 0)
  const definitions = tree.children.filter(c => c.type === 'definition' || c.type === 'footnoteDefinition').sort(byOffset)
  const linkDefinitions = definitionsOf(tree.children).filter((d): d is Definition => d.type === 'definition').sort(byOffset)
  let markers: DocumentMarkers | undefined
  return {
    tree,
    definitions,
    linkDefinitions,
    markers: () => {
      markers ??= documentMarkers(body, chunks, tree, definitions, parse)
      return markers
    }
  }
}

/** Whether a chunk's text contains a string. */
function contains (body: string, chunk: BodyChunk, text: string): boolean {
  const at = body.indexOf(text, chunk.start)
  return at !== -1 && at + text.length <= chunk.end
}

/**
 * Parses chunks in one go, separated by blank lines, then some more text (definitions). Each chunk
 * parses there as in the body: the text before it ends with nothing open.
 * @returns each chunk's top-level nodes, in body offsets, or null if a node is not within its chunk
 */
function parseChunks (parse: BodyParser, body: string, chunks: BodyChunk[], suffix = ''): RootContent[][] | null {
  let text = ''
  const at: number[] = []
  for (const chunk of chunks) {
    if (at.length > 0) text += '\n\n'
    at.push(text.length)
    text += body.slice(chunk.start, chunk.end)
  }
  const parts: RootContent[][] = chunks.map(() => [])
  let i = 0
  for (const child of parse(text + suffix).children) {
    const offset = child.position?.start.offset ?? -1
    while (i + 1 < chunks.length && offset >= (at[i + 1] ?? 0)) i++
    const chunk = chunks[i]
    const base = at[i]
    if (chunk === undefined || base === undefined) return null
    if (offset > base + chunk.end - chunk.start && i === chunks.length - 1) break
    if (offset < base || offset > base + chunk.end - chunk.start || (child.position?.end.offset ?? Infinity) > base + chunk.end - chunk.start) return null
    shiftPositions(child, chunk.start - base)
    parts[i]?.push(child)
  }
  return parts
}

/** Every definition and footnote definition in some nodes, at any depth, in document order. */
function definitionsOf (nodes: RootContent[]): AnyDefinition[] {
  const out: AnyDefinition[] = []
  for (const node of nodes) {
    visit(node, (n) => { if (n.type === 'definition' || n.type === 'footnoteDefinition') out.push(n) })
  }
  return out
}

/** Moves a subtree's offsets (lines and columns are not used and stay relative to the parse). */
function shiftPositions (node: Nodes, shift: number): void {
  if (shift === 0) return
  visit(node, (n) => {
    if (n.position === undefined) return
    if (n.position.start.offset !== undefined) n.position.start.offset += shift
    if (n.position.end.offset !== undefined) n.position.end.offset += shift
  })
}

/**
 * The document's first emphasis and strong markers, as a visit of the whole tree finds them: chunks
 * in document order, those without `*` or `_` skipped, the others taken from the window's tree or
 * parsed one by one (with the document's definitions, which decide what brackets are links) until
 * both are known.
 */
function documentMarkers (body: string, chunks: BodyChunk[], tree: Root, definitions: RootContent[], parse: BodyParser): DocumentMarkers {
  const found: DocumentMarkers = {}
  const suffix = definitions.map(d => '\n\n' + body.slice(d.position?.start.offset ?? 0, d.position?.end.offset ?? 0)).join('')
  for (const chunk of chunks) {
    if (!contains(body, chunk, '*') && !contains(body, chunk, '_')) continue
    const inChunk = (n: RootContent): boolean => (n.position?.start.offset ?? -1) >= chunk.start && (n.position?.start.offset ?? -1) < chunk.end
    let nodes = tree.children.filter(inChunk)
    if (nodes.length === 0) nodes = parseChunks(parse, body, [chunk], suffix)?.[0] ?? []
    for (const node of nodes) firstMarkers(node, body, found)
    if (found.emphasis !== undefined && found.strong !== undefined) break
  }
  return found
}
