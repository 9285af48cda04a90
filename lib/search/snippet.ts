/**
 * The snippet a search result shows: an excerpt of the first field holding a query word (the
 * title fields, then the other string fields, nested ones included, then the body), with every
 * query word in it marked. Computed per request for the page's entries only, from their data.
 */
import type { EntryData } from '../content/formats.js'
import { fieldsOf } from './entry-text.js'
import { matchesWord, type SearchQuery } from './search-query.js'
import { wordsOf } from './tokenize.js'

/** An excerpt of one field around the words that matched. */
export interface Snippet {
  /** The field's path in the entry's data: `title`, `body`, `seo.description`, `tags.1`. */
  field: string
  /** The excerpt (whitespace shown as spaces), `…` where it was cut. */
  text: string
  /** Where query words are in `text`: `[start, end)` in UTF-16 code units, in order. */
  marks: Array<[number, number]>
}

/** Characters of context kept before the first matched word. */
const BEFORE = 40
/** The longest excerpt, in characters. */
const LENGTH = 180

/**
 * The snippet of an entry for a query.
 * @returns the snippet, or null when no string field holds a query word (an id-only match)
 */
export function snippetOf (data: EntryData | undefined, query: SearchQuery, titleField: string | null): Snippet | null {
  if (data === undefined) return null
  for (const { path, value } of fieldsOf(data, titleField)) {
    const snippet = excerpt(path, value, query)
    if (snippet !== null) return snippet
  }
  return null
}

function excerpt (field: string, value: string, query: SearchQuery): Snippet | null {
  const isMatch = (term: string): boolean => query.words.some((_, i) => matchesWord(query, i, term))
  let first: { start: number, end: number } | null = null
  for (const w of wordsOf(value)) if (isMatch(w.term)) { first = w; break }
  if (first === null) return null
  let from = Math.max(0, first.start - BEFORE)
  // Start at a word's beginning.
  if (from > 0) { const space = value.slice(from, first.start).search(/\s/); from = space >= 0 ? from + space + 1 : first.start }
  let to = Math.min(value.length, from + LENGTH)
  if (to < first.end) to = first.end
  if (to < value.length) { const space = value.lastIndexOf(' ', to); if (space > first.end) to = space }
  while (from < first.start && /\s/.test(value[from] ?? '')) from++
  while (to > first.end && /\s/.test(value[to - 1] ?? '')) to--
  const head = from > 0 ? '…' : ''
  const text = head + value.slice(from, to).replace(/\s/g, ' ') + (value.slice(to).trim() !== '' ? '…' : '')
  const shift = head.length - from
  const marks: Array<[number, number]> = []
  for (const w of wordsOf(value, first.start)) {
    if (w.end > to) break
    if (isMatch(w.term)) marks.push([w.start + shift, w.end + shift])
  }
  return { field, text, marks }
}
