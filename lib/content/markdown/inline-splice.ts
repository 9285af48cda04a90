/**
 * `spliceInlineEdit`: an edited block written back by changing only the source bytes of what the editor
 * changed (CONTRACT 11), from a token diff of the block's traced rendering (source-units.ts) and the edit.
 */
import { diffArrays } from 'diff'
import type { Root as HastRoot, Element, ElementContent } from 'hast'
import type { Definition, FootnoteDefinition } from 'mdast'
import { inlineTokens, visibleTokens, sameKeys, TAG, type InlineToken } from './inline-tokens.js'
import { renderBlock, type SourceToken } from './source-units.js'
import { definitionsNamedIn, type BodyParser } from './parse-body.js'

/** What a splice needs. */
export interface SpliceInput {
  body: string
  /** The content's source range. */
  from: number
  to: number
  /** The block's rendered tokens traced to the source (sourceTokens). */
  source: SourceToken[]
  incoming: InlineToken[]
  /** The document's top-level definitions (body offsets). */
  definitions: Array<Definition | FootnoteDefinition>
  parse: BodyParser
  heading: boolean
  /** What continuation lines of the block start with (see block-edit.ts). */
  continuation: string
  newline: string
  /** Today's conversion of a fragment to Markdown (lines joined by `\n`, no prefixes). */
  convert: (fragment: HastRoot) => string
}

/** The most tokens an edit may add and remove for the diff to go on (Myers' diff is O(N·D)): about 150 words. */
const MAX_EDIT_LENGTH = 300

interface Region { ra: number, rb: number, ia: number, ib: number }

interface Plan {
  source: SourceToken[]
  incoming: InlineToken[]
  kept: boolean[]
  /** Incoming tokens typed before each source token (index source.length: at the end). */
  gaps: Map<number, [number, number]>
  regions: Region[]
}

/**
 * The new text of the content range, or null when no mapping exists (the caller converts the block).
 * @param input the block, the body and the edited HTML
 * @returns the new content
 */
export function spliceInlineEdit (input: SpliceInput): string | null {
  const plan = planSplice(input)
  if (plan === null) return null
  for (const full of [false, true]) {
    const content = writeContent(input, plan, full)
    if (content === null) return null
    if (verify(input, content, plan.incoming)) return content
  }
  return null
}

function planSplice (input: SpliceInput): Plan | null {
  const { source, incoming } = input
  if (source.length === 0) return null
  const kept = source.map(() => false)
  const toIncoming: number[] = source.map(() => -1)
  const gaps = new Map<number, [number, number]>()
  let r = 0
  let i = 0
  // Bounded: an edit rewriting most of a long block is converted whole instead of diffed.
  const changes = diffArrays(source.map(t => t.key), incoming.map(t => t.key), { maxEditLength: MAX_EDIT_LENGTH })
  if (changes === undefined) return null
  for (const change of changes) {
    const count = change.count ?? change.value.length
    if (change.added) {
      const gap = gaps.get(r)
      gaps.set(r, gap === undefined ? [i, i + count] : [gap[0], i + count])
      i += count
    } else if (change.removed) {
      r += count
    } else {
      for (let k = 0; k < count; k++) { kept[r + k] = true; toIncoming[r + k] = i + k }
      r += count
      i += count
    }
  }
  if (!kept.some(Boolean)) return null
  // Which top-level nodes are rewritten: those whose elements changed.
  const dirtyTops = new Set<number>()
  const boundaries = new Set<number>()
  source.forEach((token, k) => { if (!kept[k] && token.kind !== 'text') dirtyTops.add(token.top) })
  for (const [at, [a, b]] of gaps) {
    const before = source[at - 1]
    const after = source[at]
    const insideAtom = before !== undefined && after !== undefined && before.unit === after.unit && before.kind === 'atom'
    if (insideAtom) dirtyTops.add(before.top)
    // Elements typed between two tokens: converted there, the tokens around kept.
    else if (incoming.slice(a, b).some(t => t.key.startsWith(TAG))) boundaries.add(at)
  }
  const regions: Region[] = []
  const dirty = source.map(t => dirtyTops.has(t.top))
  for (let at = 0; at <= source.length; at++) {
    if (!(dirty[at] === true || boundaries.has(at))) continue
    let ra = at
    while (ra > 0 && !kept[ra - 1]) ra--
    let rb = at
    while (rb < source.length && (dirty[rb] === true || !kept[rb])) rb++
    let ia = 0
    for (let k = ra - 1; k >= 0; k--) if (kept[k]) { ia = (toIncoming[k] ?? -1) + 1; break }
    let ib = incoming.length
    for (let k = rb; k < source.length; k++) if (kept[k]) { ib = toIncoming[k] ?? ib; break }
    regions.push({ ra, rb, ia, ib })
    at = rb
  }
  const merged = balancedRegions(regions, incoming)
  if (merged === null) return null
  return { source, incoming, kept, gaps, regions: merged }
}

/** Joins each region whose edited tokens leave an element open with the next ones until they balance (null: never). */
function balancedRegions (regions: Region[], incoming: InlineToken[]): Region[] | null {
  const out: Region[] = []
  let open: Region | undefined
  for (const region of regions) {
    open = open === undefined ? { ...region } : { ra: open.ra, rb: region.rb, ia: open.ia, ib: region.ib }
    if (balanced(incoming.slice(open.ia, open.ib))) { out.push(open); open = undefined }
  }
  return open === undefined ? out : null
}

function balanced (tokens: InlineToken[]): boolean {
  const stack: string[] = []
  for (const token of tokens) {
    if (token.tag === 'open') stack.push(token.element?.tagName ?? '')
    else if (token.tag === 'close' && stack.pop() !== token.element?.tagName) return false
  }
  return stack.length === 0
}

/** The content's new text: source bytes where kept, typed text spliced, regions converted. */
function writeContent (input: SpliceInput, plan: Plan, full: boolean): string | null {
  const { body } = input
  const { source, incoming, kept, gaps } = plan
  const regions = new Map(plan.regions.map(region => [region.ra, region]))
  let out = ''
  let cursor = input.from
  let absorbedUpTo = -1
  for (let r = 0; r <= source.length; r++) {
    const region = regions.get(r)
    if (region !== undefined) {
      const start = region.ra < region.rb ? (source[region.ra]?.start ?? cursor) : cursor
      const end = region.ra < region.rb ? (source[region.rb - 1]?.end ?? cursor) : cursor
      const markdown = convertRegion(input, incoming.slice(region.ia, region.ib))
      if (markdown === null) return null
      out += body.slice(cursor, start) + markdown
      cursor = Math.max(cursor, end)
      absorbedUpTo = region.rb
      r = region.rb
    } else if (r > absorbedUpTo) {
      const gap = gaps.get(r)
      if (gap !== undefined) out += escapeTyped(textOf(incoming.slice(gap[0], gap[1])), { full, heading: input.heading, lineStart: atLineStart(out) })
    }
    const token = source[r]
    if (token === undefined) continue
    if (kept[r]) {
      out += body.slice(cursor, Math.max(cursor, token.end))
    } else {
      out += body.slice(cursor, Math.max(cursor, token.start))
    }
    cursor = Math.max(cursor, token.end)
  }
  return out + body.slice(cursor, input.to)
}

function textOf (tokens: InlineToken[]): string {
  return tokens.map(t => t.key).join('')
}

/** Whether text written next starts a line of the block (only container prefixes before it). */
function atLineStart (out: string): boolean {
  return /(?:^|\n)[ \t>]*$/.test(out)
}

/**
 * Typed text as Markdown source, escaped where Markdown would read syntax (md_block's and md_edit's).
 * @param text the typed text
 * @param opts.full escape every ASCII punctuation character (the second try)
 * @param opts.heading `#` escaped too
 * @param opts.lineStart the text starts a line (block markers escaped)
 * @returns the escaped text
 */
export function escapeTyped (text: string, opts: { full: boolean, heading?: boolean, lineStart: boolean }): string {
  if (opts.full) return text.replace(/[!-/:-@[-`{-~]/g, '\\$&')
  let out = text.replace(opts.heading === true ? /[\\`*_[\]<~#]/g : /[\\`*_[\]<~]/g, '\\$&')
    .replace(/&(?=#?[A-Za-z0-9]+;)/g, '\\&')
  if (opts.lineStart) {
    out = out.replace(/^([ \t]*)([#>+\-=|:])/, '$1\\$2').replace(/^([ \t]*\d+)([.)])/, '$1\\$2')
  }
  return out
}

/** Converts a run of edited tokens (balanced) with today's conversion; null when unbalanced. */
function convertRegion (input: SpliceInput, tokens: InlineToken[]): string | null {
  const root: HastRoot = { type: 'root', children: [] }
  const stack: Array<HastRoot | Element> = [root]
  for (const token of tokens) {
    const top = stack[stack.length - 1] as HastRoot | Element
    const children = top.children as ElementContent[]
    if (token.tag === undefined) {
      const last = children[children.length - 1]
      if (last?.type === 'text') last.value += token.key
      else children.push({ type: 'text', value: token.key })
    } else if (token.tag === 'void' && token.element !== undefined) {
      children.push(structuredClone(token.element))
    } else if (token.tag === 'open' && token.element !== undefined) {
      const element: Element = { type: 'element', tagName: token.element.tagName, properties: { ...token.element.properties }, children: [] }
      children.push(element)
      stack.push(element)
    } else {
      if (stack.length < 2 || (top as Element).tagName !== token.element?.tagName) return null
      stack.pop()
    }
  }
  if (stack.length !== 1) return null
  // Whitespace at the ends stays outside the conversion (which would encode it).
  const first = root.children[0]
  const last = root.children[root.children.length - 1]
  let lead = ''
  let trail = ''
  if (first?.type === 'text' && first.value.startsWith(' ')) { lead = ' '; first.value = first.value.slice(1) }
  if (last?.type === 'text' && last.value.endsWith(' ')) { trail = ' '; last.value = last.value.slice(0, -1) }
  const markdown = root.children.length === 0 ? '' : input.convert(root)
  const text = (lead + markdown + trail).replace(/^ {2,}/, ' ')
  return text.split('\n').map((line, i) => i === 0 ? line : input.continuation + line).join(input.newline)
}

/** Whether the new content, parsed alone with the definitions it names, renders as the edited HTML. */
function verify (input: SpliceInput, content: string, incoming: InlineToken[]): boolean {
  const quotes = (input.continuation.match(/>/g) ?? []).length
  const prefix = new RegExp(`^[ \\t]*(?:>[ \\t]?){0,${quotes}}`)
  const lines = content.split(/\r\n|\r|\n/)
  const text = lines.map((line, i) => i === 0 ? line : line.replace(prefix, '')).join('\n')
  const definitions = definitionsNamedIn(content, input.definitions)
    .map(d => input.body.slice(d.position?.start.offset ?? 0, d.position?.end.offset ?? 0))
    .join('\n\n')
  const tree = input.parse(definitions === '' ? text : text + '\n\n' + definitions)
  const [first, ...rest] = tree.children
  if (first?.type !== 'paragraph') return false
  if ((first.position?.end.offset ?? 0) < text.trimEnd().length) return false
  if (rest.some(node => node.type !== 'definition' && node.type !== 'footnoteDefinition')) return false
  return sameKeys(visibleTokens(inlineTokens(renderBlock(first, rest))[0] ?? []), incoming)
}
