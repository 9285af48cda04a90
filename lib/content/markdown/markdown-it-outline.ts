/**
 * A Markdown body's outline (body-outline.ts) from markdown-it's tokens, ~15x faster than micromark;
 * runs holding a construct remark-gfm reads otherwise are parsed by micromark (parse-body.ts's parseRuns).
 */
import MarkdownIt from 'markdown-it'
import type { Token, MarkdownIt as MarkdownItInstance } from 'markdown-it'
import type { Root } from 'mdast'
import { visit } from 'unist-util-visit'
import { parseRuns, bodyParser, normalizeLabel, type BodyParser } from './parse-body.js'
import { outlineOf, type BodyOutline, type TopNode, type DefinitionLabel, type DocumentMarkers } from './body-outline.js'
import { readerText, htmlText, sourceBlock } from './block-list.js'
import { blockUnits } from './editable-blocks.js'
import type { SourceBlock, BlockKind } from '../../api-shapes.js'

/** Constructs markdown-it and remark-gfm may read differently (footnotes, tables, tasks, `~`, some URL literals). */
const RISKY = /(?<!\\)\[\^(?:[^\][\n\\]|\\.)*\]:|~|\||\[[ xX]\]|<[^<>\n]*(?:%|xn--)|@(?<=_[\w.+-]*@)/i
const URL_START = /(?<![\w+.-]|\]\(|<|\]:[ \t]*)(?:[a-z][\w+.-]*:\/\/|www\.)/gi
const URL_RISK = /^[^\s<]*?(?:[*~\\`[\]]|&#?\w+;|(?<![a-z\d])_|_(?![a-z\d]))/i

/** Whether a URL literal (URL_START) holds, up to a space or `<`, what the two read differently (URL_RISK). A run is
 * read from its first start only, as later starts end later (one pattern for both took 7 s at 64 KB). */
function riskyUrl (text: string): boolean {
  URL_START.lastIndex = 0
  for (let start = URL_START.exec(text); start !== null; start = URL_START.exec(text)) {
    const from = start.index + (/^www\./i.test(start[0]) ? 4 : start[0].length)
    URL_START.lastIndex = from + text.slice(from).search(/[\s<]|$/)
    if (URL_RISK.test(text.slice(from, URL_START.lastIndex))) return true
  }
  return false
}

/** A footnote call markdown-it leaves as text (removed when the footnote is defined, as GFM reads it). */
const FOOTNOTE_CALL = /(?<![\\[])\[\^([\w.-]+)\](?![(\[:])/g

/** A footnote definition, whose indented continuation blocks markdown-it reads as code. */
const FOOTNOTE_DEFINITION = /(?<!\\)\[\^(?:[^\][\n\\]|\\.)*\]:/

/** Where a block token's first line starts in the source (container prefixes left out). */
interface LineMark { mark: number, shift: number, indent: number }

interface OutlineEnv { marks: Map<Token, LineMark>, references?: object }

/** A block of markdown-it's tokens in mdast's terms. */
interface ItNode {
  type: string
  start: number
  end: number
  /** First and last line (inclusive). */
  first: number
  last: number
  children: ItNode[]
  inline?: Token
  /** A definition's label as the source writes it, and its identifier (normalized source). */
  label?: string
  identifier?: string
  depth?: number
  value?: string
}

/** A top-level node, or lines markdown-it left out (definitions). */
interface Item { first: number, last: number, node?: ItNode }

/**
 * A body's outline: from micromark's tree for MDX and for bodies with a CR, NUL or byte order mark
 * (markdown-it rewrites them, moving its offsets), else from markdown-it.
 * @param body the body
 * @param opts.mdx the body is MDX
 * @returns the outline
 */
export function parseOutline (body: string, opts: { mdx?: boolean } = {}): BodyOutline {
  const parse = bodyParser(opts)
  if (opts.mdx === true || /[\r\0\uFEFF]/.test(body)) return outlineOf(parse(body), body)
  const lines = lineStarts(body)
  const env: OutlineEnv = { marks: new Map() }
  const md = offsetParser()
  const tokens = md.parse(body, env as unknown as Record<string, unknown>)
  const tops = buildNodes(tokens, env, body, lines)
  // A definition markdown-it reads of a label starting with `^` makes its calls links.
  const footnoteLinks = Object.keys(env.references ?? {}).some(key => key.startsWith('^'))
  const chunks = chunksOf(tops, body, lines, footnoteLinks)
  return assemble(chunks, body, lines, parse)
}

/** A markdown-it configured as CommonMark + tables + strikethrough, recording each block's first offset. */
function offsetParser (): MarkdownItInstance {
  const md = new MarkdownIt('default', { html: true, linkify: false, typographer: false, maxNesting: 1000 })
  const Inline = md.inline.State
  md.inline.State = class extends Inline {
    override push (type: string, tag: string, nesting: -1 | 0 | 1): Token {
      const token = super.push(type, tag, nesting)
      if (type === 'code_inline') keepLineEndings(token, this.src, this.pos)
      return token
    }
  }
  // Every link is a link for the outline (markdown-it refuses `javascript:` ones, remark does not).
  md.validateLink = () => true
  // Link definitions are blocks of the outline.
  md.core.ruler.disable('strip_references')
  const ruler = md.block.ruler
  for (const rule of [...ruler.__rules__]) {
    const run = rule.fn
    // Read as the rule returns: its own container's line marks are undone then, its parents' not yet.
    ruler.at(rule.name, (state, startLine, endLine, silent) => {
      const from = state.tokens.length
      const ok = run(state, startLine, endLine, silent)
      if (!ok || silent) return ok
      const marks = (state.env as unknown as OutlineEnv).marks
      for (let i = from; i < state.tokens.length; i++) {
        const token = state.tokens[i] as Token
        if (token.nesting < 0 || token.map === null || marks.has(token)) continue
        marks.set(token, { mark: state.bMarks[token.map[0]] ?? 0, shift: state.tShift[token.map[0]] ?? 0, indent: state.blkIndent })
      }
      return ok
    }, { alt: rule.alt })
  }
  return md
}

/** A code span keeps its line endings in mdast, where markdown-it makes them spaces. */
function keepLineEndings (token: Token, src: string, pos: number): void {
  let content = ''
  Object.defineProperty(token, 'content', {
    get: () => content,
    set: (value: string) => {
      const from = pos + token.markup.length
      const stripped = /[ \n]/.test(src[from] ?? '') && src.slice(from + 1, from + 1 + value.length).replace(/\n/g, ' ') === value
      content = stripped ? src.slice(from + 1, from + 1 + value.length) : src.slice(from, from + value.length)
    }
  })
}

function afterColumns (body: string, from: number, columns: number): number {
  let at = from
  for (let column = 0; column < columns && (body[at] === ' ' || body[at] === '\t'); at++) column = body[at] === '\t' ? column + 4 - (column % 4) : column + 1
  return at
}

function lineStarts (body: string): number[] {
  const starts = [0]
  for (let at = body.indexOf('\n'); at !== -1; at = body.indexOf('\n', at + 1)) starts.push(at + 1)
  return starts
}

function lineEnd (body: string, lines: number[], line: number): number {
  const next = lines[line + 1]
  return next === undefined ? body.length : next - 1
}

function isBlank (body: string, lines: number[], line: number): boolean {
  for (let i = lines[line] ?? body.length, end = lineEnd(body, lines, line); i < end; i++) {
    const c = body.charCodeAt(i)
    if (c !== 32 && c !== 9) return false
  }
  return true
}

const CONTAINERS: Record<string, string> = { bullet_list_open: 'list', ordered_list_open: 'list', list_item_open: 'listItem', blockquote_open: 'blockquote' }
const LEAVES: Record<string, string> = { code_block: 'code', fence: 'code', hr: 'thematicBreak', html_block: 'html', paragraph_open: 'paragraph', heading_open: 'heading', table_open: 'table', reference_definition: 'definition' }

/** The token stream as a tree of mdast-typed nodes with source offsets. */
function buildNodes (tokens: Token[], env: OutlineEnv, body: string, lines: number[]): ItNode[] {
  const root: ItNode = { type: 'root', start: 0, end: 0, first: 0, last: 0, children: [] }
  const stack: ItNode[] = [root]
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as Token
    const parent = stack[stack.length - 1] as ItNode
    if (token.nesting < 0) {
      if (token.type.replace(/_close$/, '_open') in CONTAINERS) closeContainer(stack.pop() as ItNode, body, lines)
      continue
    }
    const type = CONTAINERS[token.type] ?? LEAVES[token.type]
    const map = token.map
    if (type === undefined || map === null) continue
    const mark = env.marks.get(token) ?? { mark: lines[map[0]] ?? 0, shift: 0, indent: 0 }
    let start = mark.mark + mark.shift
    // Indented code starts after its container's indent, its own included.
    if (token.type === 'code_block') start = afterColumns(body, mark.mark, mark.indent)
    const node: ItNode = { type, start, end: start, first: map[0], last: map[1] - 1, children: [] }
    parent.children.push(node)
    if (token.type in CONTAINERS) { stack.push(node); continue }
    if (token.type === 'paragraph_open' || token.type === 'heading_open') {
      node.inline = tokens[i + 1]
      if (token.type === 'heading_open') node.depth = Number(token.tag.slice(1))
      i += 2
    } else if (token.type === 'table_open') {
      while (i < tokens.length && tokens[i]?.type !== 'table_close') i++
    } else if (token.type === 'code_block') {
      node.value = token.content.replace(/\n$/, '')
    } else if (token.type === 'fence') {
      // A fence left open ends before the blank lines its container ends with.
      const closed = new RegExp(`^[ \\t]*${token.markup[0] === '`' ? '`' : '~'}{${token.markup.length},}[ \\t]*$`).test(body.slice(lines[node.last], lineEnd(body, lines, node.last)))
      node.value = closed && node.last > node.first ? token.content.replace(/\n$/, '') : token.content.replace(/(?<!\n)\n+$/, '')
    } else if (token.type === 'html_block') {
      node.value = token.content
      node.start = mark.mark
    } else if (token.type === 'reference_definition') {
      const raw = LABEL.exec(body.slice(start, start + 2000))?.[1]
      if (raw !== undefined) { node.identifier = normalizeLabel(raw); node.label = raw }
    }
    // micromark ends a leaf with its last line, trailing whitespace included.
    node.end = lineEnd(body, lines, node.last)
  }
  return root.children
}

/** A definition's label on its first line (one over lines is left to micromark). */
const LABEL = /^\[((?:[^\\[\]\n]|\\[^\n])*)\]:/

/** A container ends where its last child does (an empty one after its marker). */
function closeContainer (node: ItNode, body: string, lines: number[]): void {
  const last = node.children[node.children.length - 1]
  if (last !== undefined) { node.end = last.end; node.last = last.last; return }
  node.end = node.start + 1
  // An empty item ends with its line (spaces after the marker included).
  if (node.type === 'listItem') node.end = lineEnd(body, lines, node.first)
}

/** Items not separated by a blank line, and whether micromark must read them. */
interface Chunk { items: Item[], first: number, last: number, micromark: boolean }

/** The top-level nodes and the non-blank lines between them (what markdown-it left out), in chunks. */
function chunksOf (tops: ItNode[], body: string, lines: number[], footnoteLinks: boolean): Chunk[] {
  const items: Item[] = []
  let line = 0
  const gapsUntil = (until: number): void => {
    for (; line < until; line++) {
      if (isBlank(body, lines, line)) continue
      const last = items[items.length - 1]
      if (last !== undefined && last.node === undefined && last.last === line - 1) last.last = line
      else items.push({ first: line, last: line })
    }
  }
  for (const node of tops) {
    gapsUntil(node.first)
    items.push({ first: node.first, last: node.last, node })
    line = Math.max(line, node.last + 1)
  }
  gapsUntil(lines.length)
  const chunks: Chunk[] = []
  for (const item of items) {
    const text = body.slice(lines[item.first], lineEnd(body, lines, item.last))
    const micromark = item.node === undefined || RISKY.test(text) || riskyUrl(text) || hasLabelOverLines(item.node) || (text.includes('[^') && (footnoteLinks || !onlyFootnoteCalls(text)))
    const last = chunks[chunks.length - 1]
    const touching = last !== undefined && !blankBetween(body, lines, last.last, item.first)
    const continuesFootnote = last?.micromark === true && indented(body, lines, item.first) && FOOTNOTE_DEFINITION.test(body.slice(lines[last.first], lineEnd(body, lines, last.last)))
    if (last !== undefined && (touching || continuesFootnote)) {
      last.items.push(item)
      last.last = Math.max(last.last, item.last)
      last.micromark ||= micromark
    } else {
      chunks.push({ items: [item], first: item.first, last: item.last, micromark })
    }
  }
  return chunks
}

function hasLabelOverLines (node: ItNode): boolean {
  return (node.type === 'definition' && node.label === undefined) || node.children.some(hasLabelOverLines)
}

function onlyFootnoteCalls (text: string): boolean {
  return text.split('[^').length - 1 === [...text.matchAll(FOOTNOTE_CALL)].length
}

function blankBetween (body: string, lines: number[], after: number, before: number): boolean {
  for (let line = after + 1; line < before; line++) if (isBlank(body, lines, line)) return true
  return false
}

function indented (body: string, lines: number[], line: number): boolean {
  return /^(?: {4}|\t| {1,3}\t)/.test(body.slice(lines[line], lines[line] as number + 4))
}

/** Joins the outlines of markdown-it's chunks and micromark's, in document order. */
function assemble (chunks: Chunk[], body: string, lines: number[], parse: BodyParser): BodyOutline {
  const definitions: DefinitionLabel[] = []
  for (const chunk of chunks) for (const item of chunk.items) if (item.node !== undefined) labelsOf(item.node, definitions)
  const runs = chunks.filter(c => c.micromark)
  // The last run takes the body's end (a fence left open ends there).
  const last = chunks[chunks.length - 1]
  const parsed = parseRuns(runs.map(c => ({ start: lines[c.first] as number, end: c === last ? body.length : lineEnd(body, lines, c.last) })), body, definitions.filter(d => !d.identifier.startsWith('^')), parse)
  if (parsed === null) return outlineOf(parse(body), body)
  const trees = new Map<Chunk, Root>(runs.map((chunk, i) => [chunk, parsed[i] as Root]))
  const footnotes = new Set<string>()
  for (const tree of parsed) visit(tree, 'footnoteDefinition', node => { footnotes.add(node.identifier) })
  const outline: BodyOutline = { tops: [], labels: [], markers: {}, blocks: [] }
  for (const chunk of chunks) {
    const tree = trees.get(chunk)
    if (tree !== undefined) {
      const part = outlineOf(tree, body)
      outline.tops.push(...part.tops)
      outline.labels.push(...part.labels)
      outline.blocks.push(...part.blocks)
      outline.markers = { ...part.markers, ...outline.markers }
      continue
    }
    for (const item of chunk.items) {
      const node = item.node as ItNode
      outline.tops.push({ type: node.type, start: node.start, end: node.end } satisfies TopNode)
      listBlocks(node, body, footnotes, outline.blocks)
      markersOf(node, outline.markers)
      labelsOf(node, outline.labels)
    }
  }
  return outline
}

/** block-list.ts's blocks of a top-level node. */
function listBlocks (top: ItNode, body: string, footnotes: Set<string>, out: SourceBlock[]): void {
  for (const { node } of blockUnits(top)) {
    if (node.start >= node.end) continue
    const host = node.type === 'paragraph' || node.type === 'heading' ? node : node.children[0]
    const kind = host?.inline !== undefined && isCodeInline(host.inline) ? 'mdx' : node.type as BlockKind
    out.push(sourceBlock(body, node.start, node.end, kind, node.depth, textOf(node, host, footnotes)))
  }
}

function textOf (node: ItNode, host: ItNode | undefined, footnotes: Set<string>): string {
  if (node.type === 'html') return htmlText(node.value ?? '')
  if (node.type === 'code') return node.value ?? ''
  if (host?.inline === undefined) return ''
  return readerText(inlineText(host.inline.children ?? [], footnotes))
}

/** What a reader sees of inline tokens (block-chars.ts's plainText). */
function inlineText (children: Token[], footnotes: Set<string>): string {
  let text = ''
  for (const token of children) {
    if (token.type === 'text') text += footnotes.size === 0 ? token.content : token.content.replace(FOOTNOTE_CALL, (call, label: string) => footnotes.has(normalizeLabel(label)) ? '' : call)
    else if (token.type === 'code_inline') text += token.content
    else if (token.type === 'softbreak') text += ' '
    else if (token.type === 'hardbreak') text += '\n'
  }
  return text
}

/** editable-blocks.ts's isCode on markdown-it's tokens. */
function isCodeInline (inline: Token): boolean {
  const first = inline.children?.[0]
  if (first === undefined) return false
  if (first.type === 'text') return /^(?:(?:import|export)[ \t{*]|\{|<\/?[A-Z])/.test(first.content)
  if (first.type === 'html_inline') return /^<\/?(?:[A-Z]|>)/.test(first.content)
  return false
}

function labelsOf (node: ItNode, out: DefinitionLabel[]): void {
  if (node.type === 'definition') {
    out.push({ identifier: node.identifier ?? '', line: `[${node.label ?? ''}]: #`, start: node.start })
  }
  for (const child of node.children) labelsOf(child, out)
}

function markersOf (node: ItNode, found: DocumentMarkers): void {
  if (found.emphasis !== undefined && found.strong !== undefined) return
  for (const token of node.inline?.children ?? []) {
    if (token.type === 'em_open') found.emphasis ??= token.markup === '_' ? '_' : '*'
    if (token.type === 'strong_open') found.strong ??= token.markup === '__' ? '_' : '*'
  }
  for (const child of node.children) markersOf(child, found)
}

