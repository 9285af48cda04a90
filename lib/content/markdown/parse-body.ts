/**
 * The Markdown parser of outlines and block edits (as renderMarkdown's; MDX with remark-mdx), and the
 * parse of the runs of a body that markdown-it-outline.ts leaves to micromark.
 */
import { unified } from 'unified'
import remarkParse from 'remark-parse'
import remarkGfm from 'remark-gfm'
import remarkMdx from 'remark-mdx'
import type { Root, RootContent, Definition, FootnoteDefinition } from 'mdast'
import type {} from 'mdast-util-mdx'
import { visit } from 'unist-util-visit'

/** Parses Markdown text to an mdast tree with positions. */
export type BodyParser = (text: string) => Root

/**
 * The parser of Markdown bodies, configured as renderMarkdown's (CommonMark + GFM).
 * @param opts.mdx parse MDX (`.mdx` bodies) rather than Markdown
 * @returns the parser
 */
export function bodyParser (opts: { mdx?: boolean } = {}): BodyParser {
  const processor = opts.mdx === true
    ? unified().use(remarkParse).use(remarkMdx).use(remarkGfm).freeze()
    : unified().use(remarkParse).use(remarkGfm).freeze()
  return (text) => processor.parse(text)
}

/** A run: body offsets, from a line's start to a line's end. */
interface Run { start: number, end: number }

/** Between two runs: an HTML block at column 0 after a blank line ends every block before it. */
const SEPARATOR = '\n\n<!-- -->\n\n'
/** The characters a group of runs gathers (one parse of all runs took a 1 MB body's first view from 851 to 1,150 ms). */
const GROUP_CHARS = 8000

interface RunGroup { text: string, parts: Array<{ run: Run, at: number }>, footnotes: Map<string, string>, tree: Root }

/**
 * Parses the runs of a body (markdown-it-outline.ts) in groups of 8 KB, each with the definitions it names written after it.
 * @param runs the runs, in body order
 * @param body the body
 * @param definitions the body's link definitions
 * @param parse the parser of a whole text
 * @returns each run's tree (positions in body offsets), or null when a node reaches past its run
 */
export function parseRuns (runs: Run[], body: string, definitions: Array<{ identifier: string, line: string }>, parse: BodyParser): Root[] | null {
  const groups: RunGroup[] = []
  for (const run of runs) {
    let group = groups[groups.length - 1]
    if (group === undefined || group.text.length >= GROUP_CHARS) {
      group = { text: '', parts: [], footnotes: new Map(), tree: { type: 'root', children: [] } }
      groups.push(group)
    } else {
      group.text += SEPARATOR
    }
    group.parts.push({ run, at: group.text.length })
    group.text += body.slice(run.start, run.end)
  }
  const named = (text: string): string[] => [...new Set(definitionsNamedIn(text, definitions).map(d => d.line))]
  const parseGroup = (text: string, trailer: string[]): Root => parse(trailer.length === 0 ? text : text + SEPARATOR + trailer.join('\n\n'))
  for (const group of groups) {
    group.tree = parseGroup(group.text, named(group.text))
    visit(group.tree, 'footnoteDefinition', (node) => { group.footnotes.set(node.identifier, writtenDefinition(node, group.text)) })
  }
  for (const group of groups) {
    const wanted = footnotesFromOtherGroups(group, groups)
    if (wanted.length > 0) group.tree = parseGroup(group.text, [...named(group.text), ...wanted])
  }
  const trees = groups.map(splitGroup)
  return trees.includes(null) ? null : (trees as Root[][]).flat()
}

/** A group's tree cut into its runs' trees, positions moved to body offsets (null: a node spans two runs). */
function splitGroup ({ parts, tree }: RunGroup): Root[] | null {
  const trees: Root[] = parts.map(() => ({ type: 'root', children: [] }))
  const partEnd = (index: number): number => {
    const part = parts[index]
    return part === undefined ? Infinity : part.at + part.run.end - part.run.start
  }
  let index = 0
  for (const child of tree.children) {
    const from = child.position?.start.offset ?? 0
    const to = child.position?.end.offset ?? 0
    while (index < parts.length && from >= partEnd(index)) index++
    const part = parts[index]
    if (part === undefined || from < part.at) continue
    if (to > partEnd(index)) return null
    shiftPositions(child, part.run.start - part.at)
    trees[index]?.children.push(child)
  }
  return trees
}

/** The one-line definitions of the footnotes a group names that only other groups define. */
function footnotesFromOtherGroups (group: RunGroup, groups: RunGroup[]): string[] {
  if (!group.text.includes('[^')) return []
  const lines = new Set<string>()
  for (const match of group.text.matchAll(/\[\^((?:[^\\[\]]|\\[^]){1,999})\]/g)) {
    const key = normalizeLabel(match[1] as string)
    if (group.footnotes.has(key)) continue
    for (const other of groups) {
      const line = other.footnotes.get(key)
      if (line !== undefined) { lines.add(line); break }
    }
  }
  return [...lines]
}

/** Moves every position of a subtree by `offset` characters (an MDX node's JavaScript tree is not read, so it is not moved). */
export function shiftPositions (node: RootContent, offset: number): void {
  visit(node, (n) => {
    const { position } = n
    if (position?.start.offset === undefined || position.end.offset === undefined) return
    // New points: a parser may share one point between nodes.
    n.position = {
      start: { ...position.start, offset: position.start.offset + offset },
      end: { ...position.end, offset: position.end.offset + offset }
    }
  })
}

/** A label as mdast normalizes an identifier: whitespace collapsed and trimmed, case folded. */
export function normalizeLabel (text: string): string {
  return text.replace(/[\t\n\r ]+/g, ' ').replace(/^ | $/g, '').toLowerCase().toUpperCase().toLowerCase()
}

/**
 * The definitions some Markdown text may name (their label occurs in its normalized text): a block parsed with these parses as with all.
 * @param text the Markdown
 * @param definitions the document's definitions (an identifier each)
 * @returns those the text may name
 */
export function definitionsNamedIn<T extends { identifier: string }> (text: string, definitions: T[]): T[] {
  if (definitions.length === 0) return definitions
  const normalized = normalizeLabel(text)
  return definitions.filter(d => normalized.includes(d.identifier))
}

/** A one-line definition of a link's or footnote's label as the source writes it: `[label]: #` or `[^label]: x`. */
export function writtenDefinition (node: Definition | FootnoteDefinition, text: string): string {
  const footnote = node.type === 'footnoteDefinition'
  const open = (node.position?.start.offset ?? 0) + (footnote ? 2 : 1)
  const label = /^(?:[^\\[\]]|\\[^])*/.exec(text.slice(open, open + 1000))?.[0] ?? ''
  return footnote ? `[^${label}]: x` : `[${label}]: #`
}
