/**
 * A block's plain text as a reader sees it, each character traced to its source bytes (md_edit's map), and
 * the text a generator's DOM shows for it paired with that text by a character diff in a canonical form.
 */
import type { Nodes, PhrasingContent } from 'mdast'
import type {} from 'mdast-util-mdx'
import { fromHtml } from 'hast-util-from-html'
import { diffChars } from 'diff'

/** An inline node that holds the characters of its children (or of its own value). */
export type Container = Extract<PhrasingContent, { type: 'emphasis' | 'strong' | 'delete' | 'link' | 'linkReference' | 'inlineCode' | 'mdxJsxTextElement' }>

/** One character of the block's text. */
interface TextChar {
  /** Source offset of its own bytes (-1: it has none that an edit may touch). */
  start: number
  /** End of its own bytes (a whole escape or character reference). */
  end: number
  /** Where the next character of the same node starts (whitespace and prefixes after it included). */
  next: number
  /** The containers it sits in, outermost first (shared by the characters of a node). */
  anc: readonly Container[]
  leaf: object
}

/** A block's text and its map to the source. */
export interface BlockChars {
  text: string
  /** One per UTF-16 unit of `text`. */
  chars: TextChar[]
}

/**
 * The text of phrasing content and where each of its characters is in the body.
 * @param children the block's phrasing content (positions in body offsets)
 * @param body the body
 * @returns the text and the map
 */
export function phrasingChars (children: PhrasingContent[], body: string): BlockChars {
  const out: BlockChars = { text: '', chars: [] }
  walk(children, body, [], false, out)
  return out
}

/**
 * The plain text of any node (a reader's view, as phrasingChars gives it; no map).
 * @param node a block or inline node
 * @param body the body
 * @returns the text
 */
export function plainText (node: Nodes, body: string): string {
  if (node.type === 'code' || node.type === 'inlineCode') return node.value
  if (node.type === 'html' || node.type === 'mdxjsEsm' || node.type === 'mdxFlowExpression' || node.type === 'definition') return ''
  if (node.type === 'paragraph' || node.type === 'heading') return phrasingChars(node.children, body).text
  if (!('children' in node)) return 'value' in node && node.type === 'text' ? node.value : ''
  const parts = (node.children as Nodes[]).map(child => plainText(child, body)).filter(s => s !== '')
  return parts.join(node.type === 'tableRow' ? '\t' : '\n')
}

function walk (nodes: PhrasingContent[], body: string, anc: readonly Container[], opaque: boolean, out: BlockChars): void {
  for (const node of nodes) {
    const start = node.position?.start.offset
    const end = node.position?.end.offset
    switch (node.type) {
      case 'text': {
        const extents = opaque || start === undefined || end === undefined ? null : textExtents(node.value, body, start, end)
        for (let i = 0; i < node.value.length; i++) {
          const s = extents?.starts[i] ?? -1
          const e = extents?.ends[i] ?? -1
          const next = extents === null ? -1 : (extents.starts[i + 1] ?? extents.end)
          const c = node.value[i] as string
          push(out, c === '\n' || c === '\r' ? ' ' : c, { start: s, end: e, next, anc, leaf: node })
        }
        break
      }
      case 'inlineCode':
        codeChars(node, body, [...anc, node], opaque, out)
        break
      case 'break':
        push(out, '\n', { start: opaque ? -1 : start ?? -1, end: end ?? -1, next: end ?? -1, anc, leaf: node })
        break
      case 'emphasis': case 'strong': case 'delete':
        walk(node.children, body, [...anc, node], opaque, out)
        break
      case 'link': case 'linkReference': {
        // An autolink's text is its URL, a collapsed reference's its label: not editable.
        const literal = node.type === 'link' && start !== undefined && body[start] !== '['
        const label = node.type === 'linkReference' && node.referenceType !== 'full'
        walk(node.children, body, [...anc, node], opaque || literal || label, out)
        break
      }
      case 'mdxJsxTextElement':
        // JSX is never rewritten: its text shows, but no edit may touch it.
        walk(node.children, body, [...anc, node], true, out)
        break
      default:
        // Images (alt dropped), footnote references, raw HTML tags and MDX expressions: no text.
        break
    }
  }
}

function push (out: BlockChars, c: string, char: TextChar): void {
  out.text += c
  out.chars.push(char)
}

/** A code span's characters: its content between the backtick runs (line endings read as spaces). */
function codeChars (node: Extract<PhrasingContent, { type: 'inlineCode' }>, body: string, anc: readonly Container[], opaque: boolean, out: BlockChars): void {
  const start = node.position?.start.offset
  const end = node.position?.end.offset
  let k = -1
  let stop = -1
  if (!opaque && start !== undefined && end !== undefined) {
    const fence = /^`+/.exec(body.slice(start, end))?.[0].length ?? 0
    k = start + fence
    stop = end - fence
    const inner = body.slice(k, stop).replace(/\r\n?/g, ' ')
    // One space is stripped from each side when both have one and the content is not all spaces.
    if (inner.length >= 2 && /^[ \n]/.test(inner) && /[ \n]$/.test(inner) && /[^ \n]/.test(inner)) { k++; stop-- }
  }
  for (let i = 0; i < node.value.length; i++) {
    const c = node.value[i] as string
    if (k < 0 || k >= stop) { push(out, c, { start: -1, end: -1, next: -1, anc, leaf: node }); continue }
    const width = body[k] === '\r' && body[k + 1] === '\n' ? 2 : 1
    push(out, c, { start: k, end: k + width, next: k + width, anc, leaf: node })
    k += width
  }
}

/** Decodes one character reference (`&copy;`, `&#169;`) as the HTML parser does. */
function decodeEntity (reference: string): string {
  const node = fromHtml(reference, { fragment: true }).children[0]
  return node?.type === 'text' ? node.value : reference
}

const ENTITY = /^&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});/
const PUNCTUATION = /^[!-/:-@[-`{-~]$/

/** What textExtents finds. */
interface TextExtents {
  /** The source offset each character starts at. */
  starts: number[]
  /** The source offset each character's own source ends at (a whole escape or reference). */
  ends: number[]
  /** Where the value's source ends. */
  end: number
}

/** Where each character of a text node's value is in the source (an escape or reference: its whole source); null when the value does not follow from it. */
function textExtents (value: string, body: string, start: number, end: number): TextExtents | null {
  const starts: number[] = []
  const ends: number[] = []
  let k = start
  let i = 0
  let lineStart = false
  while (i < value.length) {
    if (k >= end) return null
    const c = value[i] as string
    const s = body[k] as string
    if (s === '\\' && body[k + 1] === c && PUNCTUATION.test(c)) {
      starts.push(k); ends.push(k + 2); i++; k += 2; lineStart = false
      continue
    }
    if (s === '&') {
      const ref = ENTITY.exec(body.slice(k, Math.min(end, k + 40)))?.[0]
      const decoded = ref === undefined ? undefined : decodeEntity(ref)
      if (ref !== undefined && decoded !== undefined && decoded !== '' && decoded !== ref && value.startsWith(decoded, i)) {
        for (let n = 0; n < decoded.length; n++) { starts.push(k); ends.push(k + ref.length) }
        i += decoded.length; k += ref.length; lineStart = false
        continue
      }
    }
    if (s === c && !(lineStart && s === '>')) {
      starts.push(k); ends.push(k + 1); i++; k++
      lineStart = c === '\n'
      continue
    }
    if (s === ' ' || s === '\t' || s === '\r' || (lineStart && s === '>')) { k++; continue }
    return null
  }
  return { starts, ends, end: k }
}

/** A text with runs of whitespace collapsed to one space and the ends trimmed. */
export interface Collapsed {
  text: string
  /** For each character, the first index of the original text it stands for. */
  from: number[]
  /** For each character, the end (exclusive) of what it stands for (a whole whitespace run). */
  to: number[]
}

const SPACE = /[\s\u00a0]/

/**
 * Collapses whitespace as a browser shows it (no-break spaces included, as typed text has them).
 * @param raw the text
 * @returns the collapsed text and its map to `raw`
 */
export function collapse (raw: string): Collapsed {
  const out: Collapsed = { text: '', from: [], to: [] }
  let i = 0
  while (i < raw.length && SPACE.test(raw[i] as string)) i++
  let end = raw.length
  while (end > i && SPACE.test(raw[end - 1] as string)) end--
  while (i < end) {
    const c = raw[i] as string
    if (SPACE.test(c)) {
      let j = i
      while (j < end && SPACE.test(raw[j] as string)) j++
      out.text += ' '; out.from.push(i); out.to.push(j)
      i = j
      continue
    }
    out.text += c; out.from.push(i); out.to.push(i + 1)
    i++
  }
  return out
}

const TYPOGRAPHIC: Record<string, string> = {
  '\u201c': '"', '\u201d': '"', '\u201e': '"', '\u201f': '"', '\u00ab': '"', '\u00bb': '"',
  '\u2018': "'", '\u2019': "'", '\u201a': "'", '\u201b': "'",
  '\u2014': '---', '\u2013': '--', '\u2026': '...'
}

/** A text with typographic characters spelled in ASCII, mapped back to the text's indices. */
function canonical (text: string): { text: string, from: number[] } {
  let out = ''
  const from: number[] = []
  for (let i = 0; i < text.length; i++) {
    const spelled = TYPOGRAPHIC[text[i] as string] ?? text[i] as string
    out += spelled
    for (let n = 0; n < spelled.length; n++) from.push(i)
  }
  return { text: out, from }
}

/** Most differences between a block's DOM text and its source text the pairing looks through. */
const MAX_PAIRING_EDITS = 4000

/** How each DOM character pairs with the source text: an inclusive range of it, or none. */
interface Pairing {
  lo: number[]
  hi: number[]
  /** DOM characters that pair with a source character. */
  matched: number
}

/**
 * Pairs the characters of a DOM text with those of a source text (both collapsed).
 * @param dom the DOM text
 * @param source the source text
 * @returns for each DOM character, the source characters it shows (-1 when the generator added it),
 * or null when the texts differ too much to pair
 */
export function pairTexts (dom: string, source: string): Pairing | null {
  const d = canonical(dom)
  const s = canonical(source)
  const lo = new Array<number>(dom.length).fill(-1)
  const hi = new Array<number>(dom.length).fill(-1)
  const changes = diffChars(s.text, d.text, { maxEditLength: MAX_PAIRING_EDITS })
  if (changes === undefined) return null
  let si = 0
  let di = 0
  let matched = 0
  for (const change of changes) {
    const count = change.value.length
    if (change.added) { di += count; continue }
    if (change.removed) { si += count; continue }
    for (let n = 0; n < count; n++) {
      const dj = d.from[di + n] as number
      const sj = s.from[si + n] as number
      if (lo[dj] === -1) { lo[dj] = sj; matched++ }
      hi[dj] = Math.max(hi[dj] as number, sj)
    }
    si += count
    di += count
  }
  return { lo, hi, matched }
}
