/**
 * Pairs the blocks a generator rendered with the entry's source blocks (`GET /blocks`) by their
 * letters and digits only, in a greedy walk with a small look-ahead (linear).
 */
import type { SourceBlock } from '../../api-shapes.js'

/** A score at or above which two blocks may pair. */
const PAIR = 0.5
/** A score from the two texts' common start and end alone that needs no closer look. */
const STRONG = 0.8
/** How far ahead (in blocks, on each side) the walk looks for the next pair. */
const WINDOW = 8

/** The letters and digits of a text, lower case, accents removed. */
export function alignmentKey (text: string): string {
  return text.normalize('NFKD').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '')
}

/** How well a rendered tag fits a source kind: 1 fits, 0.8 may fit, 0 never. */
function kindFit (tag: string, kind: string, depth: number | undefined): number {
  const heading = /^h([1-6])$/.exec(tag)
  switch (kind) {
    case 'heading': return heading === null ? 0 : (depth === undefined || Number(heading[1]) === depth ? 1 : 0.8)
    case 'paragraph': case 'listItem': case 'blockquote':
      return heading !== null || tag === 'pre' || tag === 'table' || tag === 'hr' ? 0 : 1
    case 'code': return tag === 'pre' ? 1 : tag === 'div' ? 0.8 : 0
    case 'table': return tag === 'table' ? 1 : 0
    case 'thematicBreak': return tag === 'hr' ? 1 : 0
    case 'definition': return 0
    default: return 0.8
  }
}

/** Character pairs of a text with their counts (for the Dice score). */
function bigrams (key: string): Map<string, number> {
  const out = new Map<string, number>()
  for (let i = 0; i + 1 < key.length; i++) {
    const g = key.slice(i, i + 2)
    out.set(g, (out.get(g) ?? 0) + 1)
  }
  return out
}

/** The compared form of one block, computed once. */
interface Keyed { key: string, grams: Map<string, number> | null }

function textScore (a: Keyed, b: Keyed): number {
  const x = a.key
  const y = b.key
  if (x === y) return 1
  if (x === '' || y === '') return 0
  const longest = Math.max(x.length, y.length)
  const shortest = Math.min(x.length, y.length)
  let prefix = 0
  while (prefix < shortest && x.charCodeAt(prefix) === y.charCodeAt(prefix)) prefix++
  let suffix = 0
  while (suffix < shortest - prefix && x.charCodeAt(x.length - 1 - suffix) === y.charCodeAt(y.length - 1 - suffix)) suffix++
  const ends = (prefix + suffix) / longest
  if (ends >= STRONG) return ends
  // Changes in several places (two footnote numbers, a draft's edit and an attribute list).
  a.grams ??= bigrams(x)
  b.grams ??= bigrams(y)
  let shared = 0
  for (const [g, n] of a.grams) shared += Math.min(n, b.grams.get(g) ?? 0)
  const dice = (2 * shared) / Math.max(1, x.length - 1 + y.length - 1)
  return Math.max(ends, dice)
}

/**
 * Pairs page blocks (each its tag name in lower case and its text as a reader sees it) with source blocks, in order.
 * @returns for each page block, the index of its source block, or null when it has none
 */
export function alignBlocks (page: ReadonlyArray<{ tag: string, text: string }>, source: readonly SourceBlock[]): Array<number | null> {
  const pk: Keyed[] = page.map(b => ({ key: alignmentKey(b.text), grams: null }))
  const sk: Keyed[] = source.map(b => ({ key: alignmentKey(b.text), grams: null }))
  const score = (i: number, j: number): number => {
    const fit = kindFit(page[i]!.tag, source[j]!.kind, source[j]!.depth)
    if (fit === 0) return 0
    const a = pk[i]!
    const b = sk[j]!
    // Two blocks without words (an image alone, a rule) pair only when their kinds agree.
    if (a.key === '' && b.key === '') return fit === 1 ? 0.9 : 0
    return textScore(a, b) * fit
  }
  const out: Array<number | null> = page.map(() => null)
  let i = 0
  let j = 0
  while (i < page.length && j < source.length) {
    if (score(i, j) >= PAIR) { out[i++] = j++; continue }
    // The nearest pair ahead (fewest blocks skipped on both sides); at equal distance, the best.
    let next: [number, number, number] | null = null
    for (let d = 1; d <= 2 * (WINDOW - 1) && next === null; d++) {
      for (let di = Math.max(0, d - WINDOW + 1); di <= Math.min(d, WINDOW - 1); di++) {
        const ii = i + di
        const jj = j + d - di
        if (ii >= page.length || jj >= source.length) continue
        const s = score(ii, jj)
        if (s >= PAIR && (next === null || s > next[2])) next = [ii, jj, s]
      }
    }
    if (next === null) { i++; continue }
    i = next[0]
    j = next[1]
  }
  return out
}
