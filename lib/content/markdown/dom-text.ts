/**
 * The text a generator's DOM shows for a block, paired with the block's source text by a character
 * diff in a canonical form (typographic marks spelled in ASCII, whitespace collapsed).
 */
import { diffChars } from 'diff'

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
