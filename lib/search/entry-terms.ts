/**
 * What the full-text index keeps of one entry: each term with where it occurs (the id or a title
 * field, another string field, the body) and how often in the body. Bounded per entry: the first
 * MAX_BODY_CHARS of a body and MAX_FIELDS_CHARS of the other string fields are indexed.
 */
import type { EntryData } from '../content/formats.js'
import { isTitleKey, titlesOf } from '../content/entry-search.js'
import { forEachTerm } from './tokenize.js'

/** The part of a body that is indexed (and searched for a snippet), in characters. */
export const MAX_BODY_CHARS = 32 * 1024
/** The part of the other string fields (all together) that is indexed, in characters. */
export const MAX_FIELDS_CHARS = 16 * 1024

/** A term in the entry's id or title fields. */
export const IN_TITLE = 1
/** A term in another string field (nested ones included). */
export const IN_FIELDS = 2
/** A term in the body. */
export const IN_BODY = 4

/**
 * An entry's terms: term -> flags (bits 0-2: IN_TITLE | IN_FIELDS | IN_BODY; bits 3-4: how often
 * the term is in the body, 0-3 for once, twice, three times, more).
 */
export type EntryTerms = Map<string, number>

/**
 * The terms of an entry.
 * @param id entry id
 * @param data its data (a Markdown body included), undefined when the file cannot be read
 * @param titleField the collection's own title field, if any
 * @returns the terms
 */
export function entryTerms (id: string, data: EntryData | undefined, titleField: string | null): EntryTerms {
  const terms: EntryTerms = new Map()
  const add = (flag: number) => (term: string): void => { terms.set(term, (terms.get(term) ?? 0) | flag) }
  forEachTerm(id, add(IN_TITLE))
  if (data === undefined) return terms
  for (const title of titlesOf(data, titleField)) forEachTerm(title, add(IN_TITLE))
  let budget = MAX_FIELDS_CHARS
  const addField = add(IN_FIELDS)
  const visit = (value: unknown): void => {
    if (budget <= 0) return
    if (typeof value === 'string') {
      forEachTerm(value.length > budget ? value.slice(0, budget) : value, addField)
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
  const body = data.body
  if (typeof body === 'string') {
    forEachTerm(body.length > MAX_BODY_CHARS ? body.slice(0, MAX_BODY_CHARS) : body, term => {
      const flags = terms.get(term) ?? 0
      // The first occurrence sets IN_BODY; each further one counts up to 3.
      terms.set(term, (flags & IN_BODY) === 0 ? flags | IN_BODY : (flags >> 3) < 3 ? flags + 8 : flags)
    })
  }
  return terms
}

/**
 * How many words of the body an entry's terms count (for length-normalized ranking), from its
 * terms' flags.
 * @param terms the entry's terms
 * @returns the number of body word occurrences (capped per term at 4)
 */
export function bodyLength (terms: EntryTerms): number {
  let n = 0
  for (const flags of terms.values()) if ((flags & IN_BODY) !== 0) n += 1 + (flags >> 3)
  return n
}
