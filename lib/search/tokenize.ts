/**
 * How text becomes search terms, the same for entries and queries: lowercased, accents removed
 * (NFKD without combining marks), split into runs of letters and digits, each cut at
 * MAX_TERM_LENGTH characters.
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

/** Calls `each` with every term of a text, in order. */
export function forEachTerm (text: string, each: (term: string) => void): void {
  const folded = foldText(text)
  for (const [word] of folded.matchAll(WORD)) each(word.slice(0, MAX_TERM_LENGTH))
}

/** The terms of a text, in order. */
export function termsOf (text: string): string[] {
  return Array.from(foldText(text).matchAll(WORD), ([word]) => word.slice(0, MAX_TERM_LENGTH))
}

/** Where each word of a text is, lazily (a snippet stops at its excerpt's end): [start, end) and term. */
export function * wordsOf (text: string, from = 0): Generator<{ start: number, end: number, term: string }> {
  const re = new RegExp(WORD.source, 'gu')
  re.lastIndex = from
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    yield { start: m.index, end: m.index + m[0].length, term: foldText(m[0]).slice(0, MAX_TERM_LENGTH) }
  }
}
