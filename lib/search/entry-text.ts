/**
 * What the full-text index keeps of one entry: three columns of folded terms (tokenize.ts) joined by
 * spaces, so SQLite's tokenizer splits them exactly where ours did. And the snippet a result shows:
 * an excerpt of the first field holding a query word, with every query word in it marked.
 */
import type { EntryData } from '../content/formats.js'
import type { Snippet } from '../api-shapes.js'
import { isTitleKey, titlesOf } from '../content/entry-search.js'
import { matchesWord, termsOf, wordsOf, type SearchQuery } from './tokenize.js'

/** The part of a body that is indexed (and searched for a snippet), in characters. */
const MAX_BODY_CHARS = 32 * 1024
/** The part of the other string fields (all together) that is indexed, in characters. */
const MAX_FIELDS_CHARS = 16 * 1024

/** An entry's indexed text, one column each. */
export interface EntryText {
  /** The id and the title fields. */
  title: string
  /** Every other string field, nested ones included. */
  fields: string
  /** The Markdown body. */
  body: string
}

/** An entry's string fields in rank order with path, column and indexed length: titles (0), other fields (1) within
 * MAX_FIELDS_CHARS, each value counting at least 1 (walking all of 150,000 strings took 0.4 s, 60 deep 1.4 s), the body (2). */
function * fieldsOf (data: EntryData, titleField: string | null): Generator<{ path: string, value: string, column: 0 | 1 | 2, indexed: number }> {
  const titles = new Set(titlesOf(data, titleField))
  for (const key of [titleField, 'title', 'name', 'label']) {
    if (key === null || !Object.hasOwn(data, key)) continue
    const value = data[key]
    if (typeof value === 'string' && titles.delete(value)) yield { path: key, value, column: 0, indexed: value.length }
  }
  // Depth first, each open object or list a frame: its path, its keys (a list's: null) and the next one.
  const frames: Array<{ path: string | null, value: object, keys: string[] | null, at: number }> = [{ path: null, value: data, keys: Object.keys(data), at: 0 }]
  for (let budget = MAX_FIELDS_CHARS, frame = frames[0]; frame !== undefined && budget > 0; frame = frames[frames.length - 1]) {
    if (frame.at === (frame.keys ?? (frame.value as unknown[])).length) { frames.pop(); continue }
    const key = frame.keys === null ? frame.at++ : frame.keys[frame.at++]!
    const value = (frame.value as Record<string | number, unknown>)[key]
    if (frame.path === null && (key === 'body' || (typeof value === 'string' && isTitleKey(String(key), titleField)))) continue
    const path = frame.path === null ? String(key) : `${frame.path}.${key}`
    const indexed = typeof value === 'string' ? Math.min(value.length, budget) : 0
    budget -= Math.max(indexed, 1)
    if (typeof value === 'string') yield { path, value, column: 1, indexed }
    else if (value !== null && typeof value === 'object') frames.push({ path, value, keys: Array.isArray(value) ? null : Object.keys(value), at: 0 })
  }
  if (typeof data.body === 'string') yield { path: 'body', value: data.body.slice(0, MAX_BODY_CHARS), column: 2, indexed: MAX_BODY_CHARS }
}

/** The indexed text of an entry. */
export function entryText (id: string, data: EntryData | undefined, titleField: string | null): EntryText {
  const columns: string[][] = [[termsOf(id).join(' ')], [], []]
  for (const { value, column, indexed } of data === undefined ? [] : fieldsOf(data, titleField)) {
    columns[column]?.push(termsOf(value.slice(0, indexed)).join(' '))
  }
  const [title = '', fields = '', body = ''] = columns.map(parts => parts.filter(part => part !== '').join(' '))
  return { title, fields, body }
}

/** The tier an entry's text gives a query: 0 all words in the title, 1 in title or fields, 2 anywhere, null: not all. */
export function tierOf (text: EntryText, query: SearchQuery): number | null {
  const columns = [text.title, text.fields, text.body].map(column => column === '' ? [] : column.split(' '))
  let tier = 0
  for (let i = 0; i < query.words.length; i++) {
    const at = columns.findIndex(terms => terms.some(term => matchesWord(query, i, term)))
    if (at < 0) return null
    tier = Math.max(tier, at)
  }
  return tier
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
