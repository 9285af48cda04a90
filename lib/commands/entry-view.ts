/** The shape of an entry in API responses, built from the index. */
import type { ValidationIssue } from '../errors.js'
import type { EntryData } from '../content/formats.js'
import type { IndexedEntry } from '../storage/collection-index.js'
import type { Snippet } from '../search/entry-text.js'
import { localeOfId, type LocaleLayout } from '../content/i18n-layout.js'

/** An entry as the API returns it. */
export interface EntryView {
  id: string
  /** In a multilingual collection: the entry's locale and the key its translations share. */
  locale?: string
  translationKey?: string
  /** With `id=` in a multilingual collection: locale -> id of each translation that exists. */
  translations?: Record<string, string>
  /** With `translations`: the locales whose translation is older than the source (the first locale's entry). */
  outdatedTranslations?: string[]
  data?: EntryData
  revision: number
  validationIssues?: ValidationIssue[]
  readError?: { message: string }
  draft?: true
  /** With `q`: an excerpt of the first field holding a query word, the words marked (absent for an id-only match). */
  snippet?: Snippet
}

/** An indexed entry as the API returns it. */
export function toEntryView (entry: IndexedEntry, layout: LocaleLayout | null = null): EntryView {
  const view: EntryView = withLocale({ id: entry.id, revision: entry.revision }, layout)
  if (entry.readError !== undefined) {
    view.readError = entry.readError
    return view
  }
  view.data = entry.data
  if (entry.validationIssues !== undefined) view.validationIssues = entry.validationIssues
  return view
}

/** Adds the entry's `locale` and `translationKey` to the view (without a locale layout: nothing). */
export function withLocale<T extends { id: string, locale?: string, translationKey?: string }> (view: T, layout: LocaleLayout | null): T {
  if (layout === null) return view
  const where = localeOfId(layout, view.id)
  if (where !== null) {
    view.locale = where.locale
    view.translationKey = where.translationKey
  }
  return view
}
