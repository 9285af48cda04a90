/**
 * What the full-text index keeps of one entry: three columns of folded terms (tokenize.ts) joined
 * by spaces, so SQLite's tokenizer splits them exactly where ours did. Bounded per entry: the first
 * MAX_BODY_CHARS of a body and MAX_FIELDS_CHARS of the other string fields are indexed.
 */
import type { EntryData } from '../content/formats.js'
import { isTitleKey, titlesOf } from '../content/entry-search.js'
import { termsOf } from './tokenize.js'
import { matchesWord, type SearchQuery } from './search-query.js'

/** The part of a body that is indexed (and searched for a snippet), in characters. */
export const MAX_BODY_CHARS = 32 * 1024
/** The part of the other string fields (all together) that is indexed, in characters. */
export const MAX_FIELDS_CHARS = 16 * 1024

/** An entry's indexed text, one column each. */
export interface EntryText {
  /** The id and the title fields. */
  title: string
  /** Every other string field, nested ones included. */
  fields: string
  /** The Markdown body. */
  body: string
}

/**
 * An entry's string fields in rank order, each with its path and column (0 title, 1 fields, 2
 * body): the title fields (each value once), the other fields (nested ones by path), the body's
 * indexed part.
 */
export function * fieldsOf (data: EntryData, titleField: string | null): Generator<{ path: string, value: string, column: 0 | 1 | 2 }> {
  const titles = new Set(titlesOf(data, titleField))
  for (const key of [titleField, 'title', 'name', 'label']) {
    if (key === null || !Object.hasOwn(data, key)) continue
    const value = data[key]
    if (typeof value === 'string' && titles.delete(value)) yield { path: key, value, column: 0 }
  }
  for (const key of Object.keys(data)) {
    const value = data[key]
    if (key === 'body' || (typeof value === 'string' && isTitleKey(key, titleField))) continue
    yield * stringsOf(key, value)
  }
  if (typeof data.body === 'string') yield { path: 'body', value: data.body.slice(0, MAX_BODY_CHARS), column: 2 }
}

function * stringsOf (path: string, value: unknown): Generator<{ path: string, value: string, column: 1 }> {
  if (typeof value === 'string') yield { path, value, column: 1 }
  else if (Array.isArray(value)) for (let i = 0; i < value.length; i++) yield * stringsOf(`${path}.${i}`, value[i])
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) yield * stringsOf(`${path}.${k}`, v)
}

/** The indexed text of an entry. */
export function entryText (id: string, data: EntryData | undefined, titleField: string | null): EntryText {
  const columns: string[][] = [termsOf(id), [], []]
  let budget = MAX_FIELDS_CHARS
  for (const { value, column } of data === undefined ? [] : fieldsOf(data, titleField)) {
    const text = column === 1 ? value.slice(0, Math.max(budget, 0)) : value
    if (column === 1) budget -= text.length
    columns[column]?.push(...termsOf(text))
  }
  const [title = '', fields = '', body = ''] = columns.map(terms => terms.join(' '))
  return { title, fields, body }
}

/**
 * The tier an entry's text gives a query (for drafts; the index computes it for stored entries):
 * 0 all words in the title, 1 in title or fields, 2 anywhere, null when some word is nowhere.
 */
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
