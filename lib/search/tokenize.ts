/**
 * How text becomes search terms, the same for entries and queries: lowercased, accents removed
 * (NFKD without combining marks), split into runs of letters and digits. The last word of `q` also
 * matches as a prefix (what the Studio user is typing).
 */

/** Longer words (hashes, base64, URLs run together) are cut to this many characters. */
export const MAX_TERM_LENGTH = 32

const WORD = /[\p{L}\p{N}]+/gu
const NON_ASCII = /[^\x00-\x7f]/
const MARKS = /\p{M}+/gu

/** Text folded the way terms are compared: lowercase, without accents. */
export function foldText (text: string): string {
  const lower = text.toLowerCase()
  return NON_ASCII.test(lower) ? lower.normalize('NFKD').replace(MARKS, '') : lower
}

/** The terms of a text, in order. */
export function termsOf (text: string): string[] {
  return Array.from(foldText(text).matchAll(WORD), ([word]) => word.slice(0, MAX_TERM_LENGTH))
}

/** Where each word of a text is, lazily: [start, end) and term. */
export function * wordsOf (text: string, from = 0): Generator<{ start: number, end: number, term: string }> {
  const re = new RegExp(WORD.source, 'gu')
  re.lastIndex = from
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    yield { start: m.index, end: m.index + m[0].length, term: foldText(m[0]).slice(0, MAX_TERM_LENGTH) }
  }
}

/** Words of `q` beyond this many are ignored. */
const MAX_QUERY_WORDS = 8
/** A last word shorter than this matches whole words only. */
const MIN_PREFIX_LENGTH = 2

/** A parsed query. */
export interface SearchQuery {
  /** Distinct folded words, in the order given. */
  words: string[]
  /** Whether the last word also matches the terms it starts. */
  prefixLast: boolean
}

/**
 * Parses `q`; a blank one is no search (null).
 * @returns the query, or null for a blank `q`
 */
export function parseQuery (q: string | undefined): SearchQuery | null {
  if (q === undefined) return null
  if (q.trim() === '') return null
  const words = [...new Set(termsOf(q))].slice(0, MAX_QUERY_WORDS)
  const last = words[words.length - 1]
  // A space after the last word says it is complete.
  return { words, prefixLast: last !== undefined && last.length >= MIN_PREFIX_LENGTH && !/\s$/.test(q) }
}

/** Whether a term matches query word i. */
export function matchesWord (query: SearchQuery, i: number, term: string): boolean {
  const word = query.words[i] as string
  return term === word || (query.prefixLast && i === query.words.length - 1 && term.startsWith(word))
}
