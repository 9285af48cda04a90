/**
 * The Markdown parser of block edits (as renderMarkdown's; MDX with remark-mdx), parsing a long body
 * region by region: micromark's cost grows faster than the text (a 1 MB body took 17.7 s whole).
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
 * A parser of a whole text at once, configured as renderMarkdown's (CommonMark + GFM).
 * @param opts.mdx parse MDX (`.mdx` bodies) rather than Markdown
 * @returns the parser
 */
export function textParser (opts: { mdx?: boolean } = {}): BodyParser {
  const processor = opts.mdx === true
    ? unified().use(remarkParse).use(remarkMdx).use(remarkGfm).freeze()
    : unified().use(remarkParse).use(remarkGfm).freeze()
  return (text) => processor.parse(text)
}

/**
 * A parser configured as renderMarkdown's that parses a long text region by region.
 * @param opts.mdx parse MDX (`.mdx` bodies) rather than Markdown
 * @returns the parser
 */
export function bodyParser (opts: { mdx?: boolean } = {}): BodyParser {
  const parse = textParser(opts)
  return (text) => parseInRegions(text, parse)
}

/** The characters a region holds at least (where the body allows a cut). */
const REGION_CHARS = 2000

/** Appended to a region to check that every block of it has ended: it must parse as a paragraph of its own. */
const SENTINEL = 'x'

/** A definition found in a region: its normalized label (`^label` for a footnote) and a one-line definition of it. */
interface Label { key: string, line: string }

interface Region { start: number, end: number, tree: Root, labels: Label[] }

/**
 * Parses a body region by region: a region ends before a column-0 line after a blank line once a
 * sentinel line after it parses as a paragraph of its own; definitions other regions hold are written
 * before a region naming them. The tree is the one `parse(body)` gives.
 * @param body the body
 * @param parse the parser of a whole text
 * @param regionChars the characters a region holds at least (tests cut at every line they can)
 * @returns the body's tree
 */
export function parseInRegions (body: string, parse: BodyParser, regionChars = REGION_CHARS): Root {
  const cuts = cutCandidates(body)
  // micromark leaves a byte order mark out of its offsets.
  if (cuts.length === 0 || body.startsWith('\uFEFF')) return parse(body)
  const regions: Region[] = []
  let start = 0
  let next = 0
  while (start < body.length) {
    const region = firstRegion(body, start, cuts, next, parse, regionChars)
    if (region === null) return parse(body)
    regions.push(region)
    start = region.end
    while (next < cuts.length && (cuts[next] as number) <= start) next++
  }
  const definedIn = definitionRegions(regions)
  const children: RootContent[] = []
  let line = 0
  let counted = 0
  for (const [index, region] of regions.entries()) {
    line += lineBreaks(body, counted, region.start)
    counted = region.start
    const text = body.slice(region.start, region.end)
    const prefix = definitionsNamed(text, index, definedIn)
    const tail = region.end === body.length ? '' : SENTINEL
    const tree = prefix === '' ? region.tree : parse(prefix + text + tail)
    for (const child of tree.children) {
      const offset = child.position?.start.offset ?? 0
      if (offset < prefix.length || offset >= prefix.length + text.length) continue
      shiftPositions(child, region.start - prefix.length, line - lineBreaks(prefix, 0, prefix.length))
      children.push(child)
    }
  }
  return {
    type: 'root',
    children,
    position: { start: { line: 1, column: 1, offset: 0 }, end: endPoint(body) }
  }
}

/** The region at `start`, to the first cut `regionChars` on whose sentinel check passes (null: parse the body whole). */
function firstRegion (body: string, start: number, cuts: number[], from: number, parse: BodyParser, regionChars: number): Region | null {
  let want = regionChars
  let i = from
  for (;;) {
    while (i < cuts.length && (cuts[i] as number) - start < want) i++
    const end = cuts[i] ?? body.length
    const text = body.slice(start, end)
    const tree = tryParse(end === body.length ? text : text + SENTINEL, parse)
    if (tree !== null && (end === body.length || closedAt(tree, text.length))) {
      if (end < body.length) tree.children.pop()
      return { start, end, tree, labels: labelsOf(tree, text) }
    }
    if (end === body.length) return null
    want = 2 * (end - start)
  }
}

function tryParse (text: string, parse: BodyParser): Root | null {
  try {
    return parse(text)
  } catch {
    // MDX: an element or expression left open at the region's end.
    return null
  }
}

/** Whether the tree's last top-level node is the sentinel's paragraph at `at` and none before reaches it. */
function closedAt (tree: Root, at: number): boolean {
  const last = tree.children[tree.children.length - 1]
  if (last?.type !== 'paragraph' || last.position?.start.offset !== at || last.position.end.offset !== at + SENTINEL.length) return false
  const before = tree.children[tree.children.length - 2]
  return (before?.position?.end.offset ?? 0) <= at
}

/** Where a region may start: a line after a blank line, not starting with whitespace or a list marker. */
function cutCandidates (body: string): number[] {
  const cuts: number[] = []
  let blank = false
  let at = 0
  while (at < body.length) {
    let end = body.indexOf('\n', at)
    if (end === -1) end = body.length
    const first = body[at] as string
    const isBlank = /^[ \t\r]*$/.test(body.slice(at, end))
    if (blank && !isBlank && !/[ \t\-+*0-9]/.test(first)) cuts.push(at)
    blank = isBlank
    at = end + 1
  }
  return cuts
}

/** Every link and footnote definition of a region's tree, with its label as the region's source writes it. */
function labelsOf (tree: Root, text: string): Label[] {
  const out: Label[] = []
  visit(tree, (node) => {
    if (node.type !== 'definition' && node.type !== 'footnoteDefinition') return
    out.push({ key: node.type === 'footnoteDefinition' ? `^${node.identifier}` : node.identifier, line: writtenDefinition(node, text) })
  })
  return out
}

/** Each label (`^label` for a footnote): its one-line definition and the regions defining it. */
type DefinedIn = Map<string, { line: string, regions: Set<number> }>

function definitionRegions (regions: Region[]): DefinedIn {
  const out: DefinedIn = new Map()
  for (const [index, region] of regions.entries()) {
    for (const label of region.labels) {
      const known = out.get(label.key) ?? { line: label.line, regions: new Set<number>() }
      known.regions.add(index)
      out.set(label.key, known)
    }
  }
  return out
}

/** A bracketed text that may be a link label (a label holds no unescaped bracket, 999 characters at most). */
const BRACKETED = /\[((?:[^\\[\]]|\\[^]){0,999})\]/g

/** The definitions of labels the region names that only other regions define, each a paragraph ('' when none). */
function definitionsNamed (text: string, index: number, definedIn: DefinedIn): string {
  if (definedIn.size === 0) return ''
  const lines = new Set<string>()
  for (const match of text.matchAll(BRACKETED)) {
    const defined = definedIn.get(normalizeLabel(match[1] as string))
    if (defined !== undefined && !defined.regions.has(index)) lines.add(defined.line)
  }
  return lines.size === 0 ? '' : [...lines].join('\n\n') + '\n\n'
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
  const parseGroup = (text: string, trailer: string[]): Root => {
    const whole = trailer.length === 0 ? text : text + SEPARATOR + trailer.join('\n\n')
    return whole.length > 4 * GROUP_CHARS ? parseInRegions(whole, parse) : parse(whole)
  }
  for (const group of groups) {
    group.tree = parseGroup(group.text, named(group.text))
    group.footnotes = new Map()
    visit(group.tree, 'footnoteDefinition', (node) => { group.footnotes.set(node.identifier, writtenDefinition(node, group.text)) })
  }
  for (const group of groups) {
    const wanted = footnotesFromOtherGroups(group, groups)
    if (wanted.length > 0) group.tree = parseGroup(group.text, [...named(group.text), ...wanted])
  }
  const out: Root[] = []
  for (const group of groups) {
    const trees = splitGroup(group)
    if (trees === null) return null
    out.push(...trees)
  }
  return out
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
    shiftPositions(child as RootContent, part.run.start - part.at)
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

/** Moves every position of a subtree (and of an MDX node's JavaScript tree) by `offset` characters and `lines` lines. */
export function shiftPositions (node: RootContent, offset: number, lines = 0): void {
  visit(node, (n) => {
    const { position } = n
    if (position?.start.offset === undefined || position.end.offset === undefined) return
    // New points: a parser may share one point between nodes.
    n.position = {
      start: { ...position.start, line: position.start.line + lines, offset: position.start.offset + offset },
      end: { ...position.end, line: position.end.line + lines, offset: position.end.offset + offset }
    }
    const estree = (n.data as { estree?: unknown } | undefined)?.estree
    if (estree !== undefined) shiftEstree(estree, offset, lines, new Set())
  })
}

/** Moves the positions of an MDX expression's or ESM's JavaScript tree (`start`, `end`, `range`, `loc`). */
function shiftEstree (value: unknown, offset: number, lines: number, seen: Set<object>): void {
  if (typeof value !== 'object' || value === null || seen.has(value)) return
  seen.add(value)
  if (Array.isArray(value)) {
    for (const item of value) shiftEstree(item, offset, lines, seen)
    return
  }
  const node = value as { type?: unknown, start?: unknown, end?: unknown, range?: unknown, loc?: Record<'start' | 'end', { line: number, offset?: number } | undefined> }
  if (typeof node.type === 'string' || 'loc' in node) {
    if (typeof node.start === 'number') node.start += offset
    if (typeof node.end === 'number') node.end += offset
    if (Array.isArray(node.range)) node.range = node.range.map((v: unknown) => typeof v === 'number' ? v + offset : v)
    for (const point of [node.loc?.start, node.loc?.end]) {
      if (point === undefined) continue
      point.line += lines
      if (typeof point.offset === 'number') point.offset += offset
    }
  }
  for (const [key, child] of Object.entries(node)) if (key !== 'loc' && key !== 'range') shiftEstree(child, offset, lines, seen)
}

/** Line endings in `text` between `from` and `to` (as micromark counts lines: CRLF, CR, LF). */
function lineBreaks (text: string, from: number, to: number): number {
  let n = 0
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i)
    if (c === 10) n++
    else if (c === 13 && text.charCodeAt(i + 1) !== 10) n++
  }
  return n
}

/** The point at the end of the body. */
function endPoint (body: string): { line: number, column: number, offset: number } {
  const lastBreak = Math.max(body.lastIndexOf('\n'), body.lastIndexOf('\r'))
  return { line: lineBreaks(body, 0, body.length) + 1, column: body.length - lastBreak, offset: body.length }
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

/** A one-line definition of a node's label as the source writes it: `[label]: #` or `[^label]: x`. */
function writtenDefinition (node: Definition | FootnoteDefinition, text: string): string {
  const footnote = node.type === 'footnoteDefinition'
  const open = (node.position?.start.offset ?? 0) + (footnote ? 2 : 1)
  const label = /^(?:[^\\[\]]|\\[^])*/.exec(text.slice(open, open + 1000))?.[0] ?? ''
  return footnote ? `[^${label}]: x` : `[${label}]: #`
}
