/**
 * The shape of an entry in API responses, built from the index.
 */
import type { ValidationIssue } from '../errors.js'
import type { EntryData } from '../content/formats.js'
import type { IndexedEntry } from '../storage/collection-index.js'
import type { Snippet } from '../search/snippet.js'

/** An entry as the API returns it. */
export interface EntryView {
  id: string
  data?: EntryData
  revision: number
  validationIssues?: ValidationIssue[]
  readError?: { message: string }
  draft?: true
  /** With `q`: an excerpt of the first field holding a query word, the words marked (absent for an id-only match). */
  snippet?: Snippet
}

/**
 * Converts an indexed entry into its API view (data is copied so callers cannot mutate the index).
 * @param entry the indexed entry
 * @returns the view
 */
export function toEntryView (entry: IndexedEntry): EntryView {
  const view: EntryView = { id: entry.id, revision: entry.revision }
  if (entry.readError !== undefined) {
    view.readError = entry.readError
    return view
  }
  view.data = entry.data
  if (entry.validationIssues !== undefined) view.validationIssues = entry.validationIssues
  return view
}
