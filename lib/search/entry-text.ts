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

/** The indexed text of an entry. */
export function entryText (id: string, data: EntryData | undefined, titleField: string | null): EntryText {
  const title = termsOf(id)
  if (data === undefined) return { title: title.join(' '), fields: '', body: '' }
  for (const value of titlesOf(data, titleField)) title.push(...termsOf(value))
  const fields: string[] = []
  let budget = MAX_FIELDS_CHARS
  const visit = (value: unknown): void => {
    if (budget <= 0) return
    if (typeof value === 'string') {
      fields.push(...termsOf(value.length > budget ? value.slice(0, budget) : value))
      budget -= value.length
    } else if (Array.isArray(value)) {
      for (const v of value) visit(v)
    } else if (value !== null && typeof value === 'object') {
      for (const v of Object.values(value)) visit(v)
    }
  }
  for (const key of Object.keys(data)) {
    const value = data[key]
    if (key === 'body' || (typeof value === 'string' && isTitleKey(key, titleField))) continue
    visit(value)
  }
  const body = typeof data.body === 'string' ? termsOf(data.body.slice(0, MAX_BODY_CHARS)).join(' ') : ''
  return { title: title.join(' '), fields: fields.join(' '), body }
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
