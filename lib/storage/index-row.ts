/**
 * What the index keeps of one entry: its fields (a Markdown body left in the file, with where it
 * starts), validation issues, title and sort key.
 */
import type { ValidationIssue } from '../errors.js'
import { isMarkdownFormat, type EntryData, type EntryFormat } from '../content/formats.js'
import { titlesOf } from '../content/entry-search.js'

/** The parts of a collection's definition a row depends on. */
export interface RowRules {
  format: EntryFormat
  titleField: string | null
  orderField: string
}

/** An entry's indexed content. */
export interface RowContent {
  /** The entry's data, except a Markdown `body` when `bodyAt` is set. */
  fields: EntryData
  /** Where the Markdown body starts in the file's text (UTF-16 code units). */
  bodyAt?: number
  validationIssues?: ValidationIssue[]
  title: string
  order: number | null
}

/** One entry as the index holds it (what lists filter and sort on), without a Markdown body. */
export interface IndexRow extends Omit<RowContent, 'fields'> {
  id: string
  file: string
  sig: string
  revision: number
  /** As in RowContent; undefined when unreadable. */
  fields?: EntryData
  readError?: { message: string }
}

/**
 * Computes an entry's indexed content.
 * @param id entry id
 * @param data its parsed data
 * @param text the file's text when it is known to be the one `data` came from, else null
 * @param rules the collection's format, title and order fields
 * @param validate the collection's schema check
 * @returns the content to keep
 */
export function rowContent (id: string, data: EntryData, text: string | null, rules: RowRules, validate: (data: EntryData) => ValidationIssue[]): RowContent {
  const order = data[rules.orderField]
  const content: RowContent = { fields: data, title: titlesOf(data, rules.titleField)[0] ?? id, order: typeof order === 'number' ? order : null }
  const issues = validate(data)
  if (issues.length > 0) content.validationIssues = issues
  const bodyAt = isMarkdownFormat(rules.format) && text !== null ? bodyStart(data, text) : null
  if (bodyAt !== null) {
    const { body: _body, ...fields } = data
    content.fields = fields
    content.bodyAt = bodyAt
  }
  return content
}

/**
 * An index row from an entry's content, or from the reason its file cannot be read.
 * @param id entry id
 * @param file absolute file path
 * @param sig the file's signature
 * @param revision the entry's revision
 * @param content from `rowContent`, or `{ message }` for an unreadable file
 * @returns the row
 */
export function makeRow (id: string, file: string, sig: string, revision: number, content: RowContent | { message: string }): IndexRow {
  if ('message' in content) return { id, file, sig, revision, readError: { message: content.message }, title: id, order: null }
  return { id, file, sig, revision, ...content }
}

/** Where the body starts in the text, when the text ends with it and it is the last field (else null). */
function bodyStart (data: EntryData, text: string): number | null {
  const body = data.body
  if (typeof body !== 'string' || !text.endsWith(body)) return null
  let last: string | undefined
  for (const key in data) last = key
  return last === 'body' ? text.length - body.length : null
}
