/**
 * How matches are ranked: by tier first (every query word in the id or a title field; else every
 * word in the title or other string fields; else anywhere, the body included), then by score
 * (each word's rarity times where it occurs: a title counts more than a field, a field more than
 * the body, where more occurrences in a shorter body count more, BM25-like), then list order.
 */
import { IN_BODY, IN_FIELDS, IN_TITLE } from './entry-terms.js'

/** Tier bit, ANDed over the query's words: every word is in the id or a title field. */
export const ALL_TITLE = 1
/** Tier bit, ANDed over the query's words: every word is in the id, a title or another field. */
export const ALL_FIELDS = 2

/**
 * The tier bits one word's flags give.
 * @param flags the word's flags in an entry
 * @returns ALL_TITLE | ALL_FIELDS bits it satisfies
 */
export function tierBitsOf (flags: number): number {
  return ((flags & IN_TITLE) !== 0 ? ALL_TITLE | ALL_FIELDS : 0) | ((flags & IN_FIELDS) !== 0 ? ALL_FIELDS : 0)
}

/**
 * The tier of an entry from its tier bits (0 ranks first).
 * @param bits the AND of every word's tier bits
 * @returns 0, 1 or 2
 */
export function tierOf (bits: number): number {
  return (bits & ALL_TITLE) !== 0 ? 0 : (bits & ALL_FIELDS) !== 0 ? 1 : 2
}

/**
 * Inverse document frequency of a word held by `df` of `n` entries.
 * @param df entries holding it
 * @param n entries in all
 * @returns its weight (> 0)
 */
export function idfOf (df: number, n: number): number {
  return Math.log(1 + (Math.max(n, df) - df + 0.5) / (df + 0.5))
}

const TF_OF = [1, 2, 3, 5]

/**
 * One word's contribution to an entry's score.
 * @param flags the word's flags in the entry
 * @param idf the word's idf
 * @param bodyLen the entry's body length in words
 * @param avgBodyLen the collection's average body length
 * @returns the score contribution
 */
export function wordScore (flags: number, idf: number, bodyLen: number, avgBodyLen: number): number {
  let w = 0
  if ((flags & IN_TITLE) !== 0) w += 3
  if ((flags & IN_FIELDS) !== 0) w += 1.5
  if ((flags & IN_BODY) !== 0) {
    const tf = TF_OF[flags >> 3] ?? 1
    w += (tf * 2.2) / (tf + 1.2 * (0.25 + 0.75 * (avgBodyLen > 0 ? bodyLen / avgBodyLen : 1)))
  }
  return idf * w
}

/** Bits of a rank key below the score: the document number. */
const DOC_SPAN = 2 ** 21
/** The score's range in a rank key. */
const SCORE_SPAN = 2 ** 24
const SCORE_SCALE = 2 ** 14

/** Documents a rank key can number (an index rebuilds before it has more). */
export const MAX_DOCS = DOC_SPAN

/**
 * A number that sorts ascending in rank order: tier, then score (higher first), then document
 * number (list order).
 * @param tier 0, 1 or 2
 * @param score the entry's score
 * @param doc its document number (< MAX_DOCS)
 * @returns the key
 */
export function rankKey (tier: number, score: number, doc: number): number {
  const s = Math.min(SCORE_SPAN - 1, Math.round(score * SCORE_SCALE))
  return (tier * SCORE_SPAN + (SCORE_SPAN - 1 - s)) * DOC_SPAN + doc
}

/**
 * The document number of a rank key.
 * @param key from rankKey
 * @returns the document number
 */
export function docOfKey (key: number): number {
  return key % DOC_SPAN
}
