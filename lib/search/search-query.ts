/**
 * A `q` parameter as the full-text index takes it: its words folded like indexed terms, at most
 * MAX_QUERY_WORDS of them; the last one matches as a prefix too (what the Studio user is typing),
 * once it has MIN_PREFIX_LENGTH characters and no space follows it.
 */
import { BadRequestError } from '../errors.js'
import { termsOf } from './tokenize.js'

/** The longest `q` accepted, in characters (a longer one is a 400). */
export const MAX_QUERY_LENGTH = 256
/** Words of `q` beyond this many are ignored. */
export const MAX_QUERY_WORDS = 8
/** A last word shorter than this matches whole words only. */
export const MIN_PREFIX_LENGTH = 2

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
  if (q.length > MAX_QUERY_LENGTH) throw new BadRequestError(`Query parameter q must be at most ${MAX_QUERY_LENGTH} characters`, { field: 'q' })
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
