/**
 * `applyTextEdit`: a block's DOM text edit and marks written into the Markdown source (CONTRACT 11 and
 * 14) through the block's text -> source map (block-chars.ts); refused unless the block then reads so.
 */
import { diffChars } from 'diff'
import { bodyParser, type BodyParser } from './parse-body.js'
import { listBlocks, type ListedBlock } from './block-list.js'
import { phrasingChars, collapse, pairTexts, type BlockChars, type Container } from './block-chars.js'
import { inlineHost } from './editable-blocks.js'
import { parseSourceHint, sourceHash } from './source-hint.js'
import { outlineAfterEdit, regionParser, type BodyOutline, type DocumentMarkers } from './body-outline.js'
import { parseOutline } from './markdown-it-outline.js'
import { isAllowedHref } from '../../url-scheme.js'
import type { RootContent } from 'mdast'
import type { SourceHint, TextMark } from '../../api-shapes.js'
import type { MdEditCommand } from '../command-schema-table.js'

/** The hint does not name a block of this body (stale, forged or malformed). */
export class SourceMismatchError extends Error {
  override name = 'SourceMismatchError'
}

/** The block has no inline content to edit (code, table, thematic break) and the edit changes it. */
export class UneditableBlockError extends Error {
  constructor (kind: string, message = `A ${kind} block cannot be edited in place`) {
    super(message)
    this.name = 'UneditableBlockError'
  }
}

/** What a block edit returns (applyBlockEdit, applyTextEdit). */
export interface BlockEditResult {
  /** The new body (the same string when nothing changed). */
  body: string
  /** The block's range in the new body. */
  start: number
  end: number
  changed: boolean
}

/** The edit cannot be placed exactly in the source (it touches text the generator added, ...). */
export class UnmappableEditError extends Error {
  override name = 'UnmappableEditError'
}

/** What applyTextEdit returns. */
export interface TextEditResult extends BlockEditResult {
  /** The block's plain text in the new body. */
  text: string
  /** The new body's outline; null when the edit changed the blocks around it (the whole body is then outlined again off the event loop). */
  outline: BodyOutline | null
}

/** What an edit is: md_edit's block text (DOM) before and after and marks; the body and its outline when known. */
export interface TextEditInput extends Pick<MdEditCommand, 'src' | 'before' | 'after' | 'marks'> {
  body: string
  mdx?: boolean
  outline?: BodyOutline
}

/** Most characters typed and deleted in one edit for the diff to go on (Myers' diff is O(N·D)). */
const MAX_EDIT_LENGTH = 2000

/** A source range replaced by text written plain or fully escaped. */
interface Replacement { start: number, end: number, write: (full: boolean) => string }
/** What the block's text should read after the edit: characters of the old text kept, or typed. */
interface Expected { raw: number, insert?: string, key?: string }

/**
 * Applies one DOM edit of one block to the body.
 * @param input the body, the block's hint, its DOM text before and after, and marks
 * @returns the new body and the block's new range and text
 */
export function applyTextEdit (input: TextEditInput): TextEditResult {
  const parse = bodyParser({ mdx: input.mdx === true })
  const { body } = input
  const hint = checkedHint(body, input.src)
  const outline = input.outline ?? parseOutline(body, { mdx: input.mdx })
  // Only the block's top-level node is parsed, before the edit and in the checks after it.
  const region = regionParser(outline, body, hint.start, parse)
  const found = blockAt(body, hint.start, hint.end, region.parse)
  if (found === null) throw new SourceMismatchError('The source hint does not name a block')
  const { block, chars } = found
  if (!block.editable) throw new UneditableBlockError(block.kind)
  const source = collapse(chars.text)
  const before = collapse(input.before)
  const after = collapse(input.after)
  const pairing = pairTexts(before.text, source.text)
  // A DOM text that shares less than half of the block's text shows another block (a stale page).
  if (pairing === null || pairing.matched * 2 < source.text.length) throw new SourceMismatchError('The block\'s text does not match its source')
  let result = { body, start: block.start, end: block.end, changed: false, text: block.text }
  if (before.text !== after.text) {
    const changes = diffChars(before.text, after.text, { maxEditLength: MAX_EDIT_LENGTH })
    if (changes === undefined) throw new UnmappableEditError('The edit changes too much of the block at once; edit it in smaller steps')
    const plan = planEdit(changes, input.after, after.text.length, pairing, source, chars, block, body)
    result = writeEdit(plan, chars, block, body, region.parse)
  }
  if (input.marks !== undefined && input.marks.length > 0) {
    const marked = applyTextMarks({ body: result.body, start: result.start, end: result.end, after: input.after, marks: input.marks, parse: region.parse, markers: outline.markers })
    result = { ...marked, changed: marked.body !== body }
  }
  if (result.body === body) return { ...result, outline }
  const alone = region.parseNode(result.body)
  // An edit that changed the blocks around it leaves no outline: a whole parse of a large body must not run here.
  return { ...result, outline: alone === null ? null : outlineAfterEdit(outline, body, result.body, region.index, alone) }
}

interface Plan { replacements: Replacement[], expected: Expected[] }

/** Turns the DOM diff into source replacements and the text the block should then read. */
function planEdit (changes: ReturnType<typeof diffChars>, afterRaw: string, afterLength: number, pairing: NonNullable<ReturnType<typeof pairTexts>>, source: ReturnType<typeof collapse>, chars: BlockChars, block: ListedBlock, body: string): Plan {
  const replacements: Replacement[] = []
  const deleted = new Set<number>()
  const inserts = new Map<number, Array<{ text: string, key: string }>>()
  let at = 0
  let ai = 0
  for (let c = 0; c < changes.length; c++) {
    const change = changes[c]!
    if (!change.added && !change.removed) { at += change.value.length; ai += change.value.length; continue }
    let removed = 0
    let typed = ''
    if (change.removed) { removed = change.value.length; if (changes[c + 1]?.added === true) typed = changes[++c]!.value }
    else typed = change.value
    if (removed > 0) {
      const raw = pairedRaw(at, at + removed, pairing, source)
      for (let r = raw[0]; r < raw[1]; r++) deleted.add(r)
      const pieces = deletionPieces(raw[0], raw[1], chars, typed === '')
      const first = chars.chars[raw[0]]!
      pieces.forEach((piece, i) => replacements.push({ ...piece, write: i === 0 && typed !== '' ? escapeFor(typed, first.anc, body, piece.start, block.kind === 'heading') : () => '' }))
      if (typed !== '') addInsert(inserts, raw[0], typed, keyOf(first.anc))
    } else {
      const { pos, anc, raw, edge } = insertionPoint(at, pairing, source, chars, block)
      // Text typed after an image or before one keeps the space the DOM shows between them.
      let text = typed
      if (edge === 'end' && ai === 0 && /^[\s\u00a0]/.test(afterRaw) && /\S/.test(body[pos - 1] ?? '')) text = ' ' + text
      if (edge === 'start' && ai + typed.length === afterLength && /[\s\u00a0]$/.test(afterRaw) && /\S/.test(body[pos] ?? '')) text += ' '
      replacements.push({ start: pos, end: pos, write: escapeFor(text, anc, body, pos, block.kind === 'heading') })
      addInsert(inserts, raw, text, keyOf(anc))
    }
    at += removed
    ai += typed.length
  }
  const expected: Expected[] = []
  for (let r = 0; r <= chars.chars.length; r++) {
    for (const insert of inserts.get(r) ?? []) for (const ch of insert.text) expected.push({ raw: -1, insert: ch, key: insert.key })
    if (r < chars.chars.length && !deleted.has(r)) expected.push({ raw: r })
  }
  return { replacements, expected }
}

function addInsert (inserts: Map<number, Array<{ text: string, key: string }>>, raw: number, text: string, key: string): void {
  const list = inserts.get(raw) ?? []
  list.push({ text, key })
  inserts.set(raw, list)
}

/** The raw source-text characters that DOM characters [from, to) show; all must have a source. */
function pairedRaw (from: number, to: number, pairing: NonNullable<ReturnType<typeof pairTexts>>, source: ReturnType<typeof collapse>): [number, number] {
  let lo = Number.POSITIVE_INFINITY
  let hi = -1
  for (let j = from; j < to; j++) {
    const l = pairing.lo[j] ?? -1
    if (l === -1) throw new UnmappableEditError('The edit changes text the generator added (an anchor, a footnote number, a typographic mark)')
    lo = Math.min(lo, l)
    hi = Math.max(hi, pairing.hi[j] ?? l)
  }
  return [source.from[lo]!, source.to[hi]!]
}

/** The source ranges deleting raw characters [r0, r1) removes: one per node, or a whole container all of whose characters go. */
function deletionPieces (r0: number, r1: number, chars: BlockChars, wholeContainers: boolean): Array<{ start: number, end: number }> {
  const pieces: Array<{ start: number, end: number }> = []
  for (let r = r0; r < r1;) {
    const char = chars.chars[r]!
    if (char.start < 0) throw new UnmappableEditError('The edit changes text that has no source of its own (an autolink, a reference label, JSX)')
    const covered = wholeContainers ? char.anc.find(node => coveredBy(node, r0, r1, chars)) : undefined
    if (covered !== undefined) {
      pieces.push({ start: covered.position!.start.offset!, end: covered.position!.end.offset! })
      while (r < r1 && chars.chars[r]!.anc.includes(covered)) r++
      continue
    }
    let s = r
    while (s + 1 < r1 && chars.chars[s + 1]!.leaf === char.leaf && chars.chars[s + 1]!.start >= 0) s++
    pieces.push({ start: char.start, end: chars.chars[s]!.next })
    r = s + 1
  }
  return pieces
}

function coveredBy (node: Container, r0: number, r1: number, chars: BlockChars): boolean {
  for (let r = 0; r < chars.chars.length; r++) {
    if (chars.chars[r]!.anc.includes(node) && (r < r0 || r >= r1)) return false
  }
  return node.position?.start.offset !== undefined && node.position.end.offset !== undefined
}

/** Where text typed at DOM index `at` goes: after the source character before it, outside the containers that one closes. */
function insertionPoint (at: number, pairing: NonNullable<ReturnType<typeof pairTexts>>, source: ReturnType<typeof collapse>, chars: BlockChars, block: ListedBlock): { pos: number, anc: readonly Container[], raw: number, edge?: 'start' | 'end' } {
  let j = at - 1
  while (j >= 0 && (pairing.lo[j] ?? -1) === -1) j--
  const aRaw = j < 0 ? -1 : source.to[pairing.hi[j]!]! - 1
  const bRaw = aRaw + 1
  const content = contentRange(block)
  if (aRaw < 0 && source.text.length > 0) return { pos: content.start, anc: [], raw: 0, edge: 'start' }
  if (!/[^\s\u00a0]/.test(chars.text.slice(bRaw))) return { pos: content.end, anc: [], raw: chars.chars.length, edge: 'end' }
  const a = chars.chars[aRaw]!
  const b = chars.chars[bRaw]!
  let p = 0
  while (p < a.anc.length && a.anc[p] === b.anc[p]) p++
  if (a.anc.length > p) return { pos: a.anc[p]!.position!.end.offset!, anc: a.anc.slice(0, p), raw: bRaw }
  if (a.start < 0) throw new UnmappableEditError('The edit falls next to text that has no source of its own')
  return { pos: a.next, anc: a.anc, raw: bRaw }
}

/**
 * Where a block's inline content starts and ends (after the marker of an empty block).
 * @param block the block: its node and end offset
 * @returns the content's source range
 */
export function contentRange (block: { node: RootContent, end: number }): { start: number, end: number } {
  const host = inlineHost(block.node)
  const first = host?.children[0]?.position?.start.offset
  const last = host?.children[host.children.length - 1]?.position?.end.offset
  if (first === undefined || last === undefined) return { start: block.end, end: block.end }
  return { start: first, end: last }
}

/** Typed text as Markdown in its place: verbatim in a code span, else escaped (escapeTyped). */
function escapeFor (text: string, anc: readonly Container[], body: string, pos: number, heading: boolean): (full: boolean) => string {
  if (anc.some(node => node.type === 'inlineCode')) return () => text
  const line = body.slice(body.lastIndexOf('\n', pos - 1) + 1, pos)
  const lineStart = /^[ \t>]*(?:(?:[-+*]|\d{1,9}[.)])[ \t]+)*(?:#{1,6}[ \t]+)?$/.test(line)
  return (full) => escapeTyped(text, { full, heading, lineStart })
}

/** Applies the replacements and checks the block reads as expected; escapes fully on a second try. */
function writeEdit (plan: Plan, chars: BlockChars, block: ListedBlock, body: string, parse: BodyParser): Omit<TextEditResult, 'outline'> {
  const sorted = [...plan.replacements].sort((x, y) => x.start - y.start || x.end - y.end)
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.start < sorted[i - 1]!.end) throw new UnmappableEditError('The edit\'s changes overlap in the source')
  }
  if (sorted.some(r => r.start < block.start || r.end > block.end)) throw new UnmappableEditError('The edit falls outside the block')
  const expected = expectedText(plan.expected, chars)
  for (const full of [false, true]) {
    let next = ''
    let cursor = 0
    for (const r of sorted) {
      next += body.slice(cursor, r.start) + r.write(full)
      cursor = r.end
    }
    next += body.slice(cursor)
    const end = block.end + next.length - body.length
    const found = readBack(next, block, end, parse)
    if (found !== null && found.reads === expected) return { body: next, start: block.start, end, changed: next !== body, text: found.text }
  }
  throw new UnmappableEditError('The edit cannot be written without changing how the rest of the block reads')
}

/** The block's expected reading: its collapsed text, each non-space character with its containers. */
function expectedText (expected: Expected[], chars: BlockChars): string {
  return reading(expected.map(e => e.raw >= 0
    ? { c: chars.text[e.raw]!, key: keyOf(chars.chars[e.raw]!.anc) }
    : { c: e.insert!, key: e.key ?? '' }))
}

const NODE_OF: Record<TextMark['type'], string> = { strong: 'strong', em: 'emphasis', code: 'inlineCode', link: 'link' }

/** Wraps the source of each mark's characters (offsets in the DOM text `after`). */
function applyTextMarks (input: { body: string, start: number, end: number, after: string, marks: TextMark[], parse: BodyParser, markers: DocumentMarkers }): { body: string, start: number, end: number, text: string } {
  let { body, end } = input
  let text = ''
  const style = { emphasis: input.markers.emphasis ?? '*', strong: (input.markers.strong ?? '*').repeat(2) }
  for (const mark of input.marks) {
    if (mark.type === 'link' && (typeof mark.href !== 'string' || !isAllowedHref(mark.href) || /[\s<>]/.test(mark.href.trim()))) {
      throw new UnmappableEditError('A link needs an http, https, mailto or relative href without spaces or angle brackets')
    }
    const current = blockAt(body, input.start, end, input.parse)
    if (current === null || current.chars.text === '') throw new UnmappableEditError('The block has no text to format')
    const { block, chars } = current
    const range = markedChars(mark, input.after, chars)
    text = block.text
    if (range === null) continue
    const [r0, r1] = range
    const first = chars.chars[r0]!
    if (first.anc.some(node => node.type === NODE_OF[mark.type])) continue
    if (mark.type === 'link' && first.anc.some(node => node.type === 'link' || node.type === 'linkReference')) {
      throw new UnmappableEditError('A link cannot go inside another link')
    }
    const from = first.start
    const to = chars.chars[r1]!.end
    const wrapped = wrap(mark, body, from, to, chars.text.slice(r0, r1 + 1), style)
    const next = body.slice(0, from) + wrapped + body.slice(to)
    const nextEnd = end + next.length - body.length
    const found = readBack(next, block, nextEnd, input.parse)
    if (found === null || collapse(found.text).text !== collapse(block.text).text || !marked(next, block.start, nextEnd, input.parse, mark, from)) {
      throw new UnmappableEditError(`The ${mark.type} mark cannot be written without changing how the block reads`)
    }
    body = next
    end = nextEnd
    text = found.text
  }
  return { body, start: input.start, end, text }
}

/** The raw characters a mark covers (whitespace at its ends left out), all in one container. */
function markedChars (mark: TextMark, after: string, chars: BlockChars): [number, number] | null {
  if (mark.start < 0 || mark.end > after.length || mark.start >= mark.end) throw new UnmappableEditError('A mark\'s range is outside the text')
  const dom = collapse(after)
  const source = collapse(chars.text)
  const pairing = pairTexts(dom.text, source.text)
  if (pairing === null) throw new UnmappableEditError('The block\'s text does not match the edit')
  let lo = Number.POSITIVE_INFINITY
  let hi = -1
  for (let k = 0; k < dom.text.length; k++) {
    if (dom.from[k]! < mark.start || dom.to[k]! > mark.end || dom.text[k] === ' ') continue
    const l = pairing.lo[k] ?? -1
    if (l === -1) throw new UnmappableEditError('A mark covers text the generator added')
    lo = Math.min(lo, l)
    hi = Math.max(hi, pairing.hi[k] ?? l)
  }
  if (hi < 0) return null
  const r0 = source.from[lo]!
  const r1 = source.to[hi]! - 1
  const anc = chars.chars[r0]!.anc
  for (let r = r0; r <= r1; r++) {
    const char = chars.chars[r]!
    if (char.start < 0) throw new UnmappableEditError('A mark covers text that has no source of its own')
    if (char.anc !== anc && !(char.anc.length === anc.length && char.anc.every((n, i) => n === anc[i]))) {
      throw new UnmappableEditError('A mark must lie within one run of formatting')
    }
  }
  return [r0, r1]
}

function wrap (mark: TextMark, body: string, from: number, to: number, text: string, style: { emphasis: string, strong: string }): string {
  const source = body.slice(from, to)
  // `_` does not open or close emphasis inside a word.
  const intraword = /[\p{L}\p{N}]/u.test(body[from - 1] ?? '') || /[\p{L}\p{N}]/u.test(body[to] ?? '')
  if (mark.type === 'strong') return intraword && style.strong === '__' ? `**${source}**` : `${style.strong}${source}${style.strong}`
  if (mark.type === 'em') return intraword && style.emphasis === '_' ? `*${source}*` : `${style.emphasis}${source}${style.emphasis}`
  if (mark.type === 'code') {
    const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map(m => m[0].length))
    const fence = '`'.repeat(longest + 1)
    const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : ''
    return `${fence}${pad}${text}${pad}${fence}`
  }
  const href = (mark.href ?? '').trim()
  const destination = /[()]/.test(href) ? `<${href}>` : href
  return `[${source}](${destination})`
}

/** Whether the characters at `from` in the new block sit in the mark's kind of node. */
function marked (body: string, start: number, end: number, parse: BodyParser, mark: TextMark, from: number): boolean {
  const char = blockAt(body, start, end, parse)?.chars.chars.find(c => c.start >= from)
  return char?.anc.some(node => node.type === NODE_OF[mark.type] && (mark.type !== 'link' || (node.type === 'link' && node.url === (mark.href ?? '').trim()))) === true
}

/** A container's identity for comparing what a character sits in before and after the edit. */
function keyOf (anc: readonly Container[]): string {
  return anc.map(node => node.type === 'link' ? `link(${node.url})` : node.type === 'linkReference' ? `ref(${node.identifier})` : node.type).join('>')
}

/** A text with what each character sits in, collapsed as a browser shows it: what the check compares. */
function reading (items: Array<{ c: string, key: string }>): string {
  let out = ''
  let space = false
  for (const { c, key } of items) {
    if (/[\s\u00a0]/.test(c) && c !== '\n') { space = out !== ''; continue }
    if (space) out += ' \u0000'
    space = false
    out += c + '\u0001' + key + '\u0000'
  }
  return out
}

/** The block at the same start in a new body, its reading and text; null when the block changed kind or extent. */
function readBack (next: string, block: ListedBlock, end: number, parse: BodyParser): { reads: string, text: string } | null {
  const again = blockAt(next, block.start, end, parse)
  if (again === null || again.block.kind !== block.kind || again.block.depth !== block.depth || !again.block.editable) return null
  const { chars } = again
  return { reads: reading(chars.chars.map((ch, i) => ({ c: chars.text[i]!, key: keyOf(ch.anc) }))), text: again.block.text }
}

/** The block from `start` to `end` of a body and the characters of its own text (none without inline content); null when no block is there. */
function blockAt (body: string, start: number, end: number, parse: BodyParser): { block: ListedBlock, chars: BlockChars } | null {
  const block = listBlocks(parse(body), body, start).find(b => b.end === end)
  if (block === undefined) return null
  const host = inlineHost(block.node)
  return { block, chars: host === null ? { text: '', chars: [] } : phrasingChars(host.children, body) }
}

/**
 * The hint, if it parses and its hash matches the body's text at its range.
 * @param body the body
 * @param src the hint
 * @returns the parsed hint, or SourceMismatchError
 */
export function checkedHint (body: string, src: string): SourceHint {
  const hint = parseSourceHint(src)
  if (hint === null) throw new SourceMismatchError('Malformed source hint')
  if (hint.end > body.length || sourceHash(body.slice(hint.start, hint.end)) !== hint.hash) {
    throw new SourceMismatchError('The source hint does not match the body')
  }
  return hint
}

/** Typed text as Markdown source, escaped where Markdown would read syntax (`full`: every ASCII punctuation character). */
function escapeTyped (text: string, opts: { full: boolean, heading: boolean, lineStart: boolean }): string {
  if (opts.full) return text.replace(/[!-/:-@[-`{-~]/g, '\\$&')
  let out = text.replace(opts.heading ? /[\\`*_[\]<~#]/g : /[\\`*_[\]<~]/g, '\\$&')
    .replace(/&(?=#?[A-Za-z0-9]+;)/g, '\\&')
  if (opts.lineStart) {
    out = out.replace(/^([ \t]*)([#>+\-=|:])/, '$1\\$2').replace(/^([ \t]*\d+)([.)])/, '$1\\$2')
  }
  return out
}
