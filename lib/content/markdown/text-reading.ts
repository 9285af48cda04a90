/**
 * How a block reads, for checking an edit: its collapsed text with, for each character, the
 * containers it sits in (emphasis, links, code spans). An edit is kept only when the block reads
 * after it as the edit says it should.
 */
import type { BodyParser } from './parse-body.js'
import { listBlocks, type ListedBlock } from './block-list.js'
import { phrasingChars, type BlockChars, type Container } from './block-chars.js'
import { inlineHost } from './editable-blocks.js'

/** The edit cannot be placed exactly in the source (it touches text the generator added, ...). */
export class UnmappableEditError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'UnmappableEditError'
  }
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
export function blockAt (body: string, start: number, end: number, parse: BodyParser): { block: ListedBlock, chars: BlockChars } | null {
  const block = listBlocks(parse(body), body, start).find(b => b.end === end)
  const host = block === undefined ? null : inlineHost(block.node)
  return block === undefined || host === null ? null : { block, chars: phrasingChars(host.children, body) }
}
