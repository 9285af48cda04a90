/**
 * Formatting an editor applied to a block's text (`marks` of md_edit): each mark wraps the source
 * of the characters it covers, found through the block's text-offset -> source-offset map, in the
 * document's own markers (`**`/`__`, `*`/`_`), a code span or an inline link. Nothing else changes.
 * Also how a block reads, for checking an edit: its collapsed text with, for each character, the
 * containers it sits in; an edit is kept only when the block reads after it as the edit says.
 */
import type { BodyParser } from './parse-body.js'
import { listBlocks, type ListedBlock } from './block-list.js'
import { phrasingChars, type BlockChars, type Container } from './block-chars.js'
import { inlineHost } from './editable-blocks.js'
import { collapse, pairTexts } from './dom-text.js'
import type { DocumentMarkers } from './body-outline.js'
import { isAllowedHref } from './inline-sanitize.js'

/** The edit cannot be placed exactly in the source (it touches text the generator added, ...). */
export class UnmappableEditError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'UnmappableEditError'
  }
}

/** One piece of formatting, as offsets into the DOM text after the edit. */
export interface TextMark {
  type: 'strong' | 'em' | 'code' | 'link'
  start: number
  end: number
  /** The link's target (http, https, mailto or relative). */
  href?: string
}

const NODE_OF: Record<TextMark['type'], string> = { strong: 'strong', em: 'emphasis', code: 'inlineCode', link: 'link' }

/**
 * Wraps the source of each mark's characters.
 * @param input the body, the block's range in it, the DOM text the offsets count in, the marks, the parser
 * for read-backs and the document's emphasis and strong markers
 * @returns the new body, the block's range and text
 */
export function applyTextMarks (input: { body: string, start: number, end: number, after: string, marks: TextMark[], parse: BodyParser, markers: DocumentMarkers }): { body: string, start: number, end: number, text: string } {
  let { body, end } = input
  let text = ''
  const style = { emphasis: input.markers.emphasis ?? '*', strong: (input.markers.strong ?? '*').repeat(2) }
  for (const mark of input.marks) {
    if (mark.type === 'link' && (typeof mark.href !== 'string' || !isAllowedHref(mark.href) || /[\s<>]/.test(mark.href.trim()))) {
      throw new UnmappableEditError('A link needs an http, https, mailto or relative href without spaces or angle brackets')
    }
    const current = blockAt(body, input.start, end, input.parse)
    if (current === null) throw new UnmappableEditError('The block has no text to format')
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

/**
 * A container's identity for comparing what a character sits in before and after the edit.
 * @param anc the containers, outermost first
 * @returns a key
 */
export function keyOf (anc: readonly Container[]): string {
  return anc.map(node => node.type === 'link' ? `link(${node.url})` : node.type === 'linkReference' ? `ref(${node.identifier})` : node.type).join('>')
}

/**
 * A text with what each character sits in, collapsed as a browser shows it; the form both sides of
 * the check compare in.
 * @param items characters and their container keys
 * @returns the reading
 */
export function reading (items: Array<{ c: string, key: string }>): string {
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
export function readBack (next: string, block: ListedBlock, end: number, parse: BodyParser): { reads: string, text: string } | null {
  const tree = parse(next)
  const again = listBlocks(tree, next, block.start)[0]
  if (again === undefined || again.end !== end || again.kind !== block.kind || again.depth !== block.depth || !again.editable) return null
  const chars = blockChars(again, next)
  return { reads: reading(chars.chars.map((ch, i) => ({ c: chars.text[i]!, key: keyOf(ch.anc) }))), text: again.text }
}

/**
 * The characters of an editable block's own text and their map to the source.
 * @param block the block
 * @param body the body
 * @returns its text and map (empty for an empty block)
 */
export function blockChars (block: ListedBlock, body: string): BlockChars {
  const host = inlineHost(block.node)
  return host === null ? { text: '', chars: [] } : phrasingChars(host.children, body)
}

/** The block from `start` to `end` of a body and its characters; null when no block with text is there. */
function blockAt (body: string, start: number, end: number, parse: BodyParser): { block: ListedBlock, chars: BlockChars } | null {
  const block = listBlocks(parse(body), body, start).find(b => b.end === end)
  return block === undefined || inlineHost(block.node) === null ? null : { block, chars: blockChars(block, body) }
}
