/**
 * `blockWindow`: the tree of only the part of a body around one block, so an edit does not parse
 * the whole body. The window is the top-level chunks (see body-chunks.ts) that cover the block,
 * parsed together with the chunks elsewhere that hold link or footnote definitions (references
 * resolve only when the parser sees their definitions), all in document order (a label's first
 * definition wins); every position is then moved back to body offsets. Each chunk parses alone as
 * in the whole body, so the window's nodes are the body's.
 * Whenever the window cannot be sure to parse as the whole body would, it is null and the caller
 * parses the whole body.
 */
import type { Root, RootContent, Definition, FootnoteDefinition, Nodes } from 'mdast'
import { visit } from 'unist-util-visit'
import { bodyChunks, type BodyChunk } from './body-chunks.js'
import type { BodyParser } from './parse-body.js'
import { firstMarkers, type DocumentContext, type DocumentMarkers } from './document-context.js'

/** What an edit needs of the document, from the window instead of the whole tree. */
export interface BlockWindow extends DocumentContext {
  /** The nodes of the window and of the chunks with definitions, in document order and body offsets. */
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
  // Every definition contains `]:`; a chunk without one has none. Parsed in document order, so a
  // label defined twice resolves to its first definition, as in the whole body.
  const parsed: BodyChunk[] = []
  for (const [i, chunk] of chunks.entries()) {
    if (i === first) parsed.push({ start: from, end: to })
    else if ((i < first || i > last) && contains(body, chunk, ']:')) parsed.push(chunk)
  }
  const parts = parseChunks(parse, body, parsed)
  if (parts === null) return null
  const tree: Root = { type: 'root', children: parts.flat() }
  const definitions = tree.children.filter(c => c.type === 'definition' || c.type === 'footnoteDefinition')
  const linkDefinitions = definitionsOf(tree.children).filter((d): d is Definition => d.type === 'definition')
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
 * Parses chunks in one go, in document order, separated by blank lines, after some text (the
 * document's definitions) whose nodes are left out. Each chunk parses there as in the body: the
 * text before it ends with nothing open.
 * @returns each chunk's top-level nodes, in body offsets, or null if a node is not within its chunk
 */
function parseChunks (parse: BodyParser, body: string, chunks: BodyChunk[], prefix = ''): RootContent[][] | null {
  let text = prefix
  const at: number[] = []
  for (const chunk of chunks) {
    if (text !== '') text += '\n\n'
    at.push(text.length)
    text += body.slice(chunk.start, chunk.end)
  }
  const parts: RootContent[][] = chunks.map(() => [])
  let i = 0
  for (const child of parse(text).children) {
    const offset = child.position?.start.offset ?? -1
    if (offset < (at[0] ?? 0) && (child.position?.end.offset ?? Infinity) <= prefix.length) continue
    while (i + 1 < chunks.length && offset >= (at[i + 1] ?? 0)) i++
    const chunk = chunks[i]
    const base = at[i]
    if (chunk === undefined || base === undefined) return null
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
  const prefix = definitions.map(d => body.slice(d.position?.start.offset ?? 0, d.position?.end.offset ?? 0)).join('\n\n')
  for (const chunk of chunks) {
    if (!contains(body, chunk, '*') && !contains(body, chunk, '_')) continue
    const inChunk = (n: RootContent): boolean => (n.position?.start.offset ?? -1) >= chunk.start && (n.position?.start.offset ?? -1) < chunk.end
    let nodes = tree.children.filter(inChunk)
    if (nodes.length === 0) nodes = (parseChunks(parse, body, [chunk], prefix) ?? parseChunks(parse, body, [chunk]))?.[0] ?? []
    for (const node of nodes) firstMarkers(node, body, found)
    if (found.emphasis !== undefined && found.strong !== undefined) break
  }
  return found
}
