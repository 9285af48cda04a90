/**
 * Lists or reads entries of a collection as one editor sees them (their drafts laid over):
 * paginated, found by `q` (ranked full text with snippets, lib/search/), sorted by a field and
 * filtered by draft state, or one entry by `id`.
 */
import { BadRequestError, UnreadableEntryError, NotFoundError } from '../errors.js'
import type { ContentStore } from '../storage/content-store.js'
import type { DraftRecord, DraftEntry } from '../storage/draft-store.js'
import type { CollectionIndex, IndexedEntry, IndexRow } from '../storage/collection-index.js'
import { paginate } from '../storage/media-index.js'
import { isAncestor, lastCommitsOf } from '../storage/git-search.js'
import { relativeSlashPath } from '../storage/safe-path.js'
import { localeOfId, translationsOf, type LocaleLayout } from '../content/i18n-layout.js'
import { checkSortField, overlayPage, sortMatching, type DraftFilter, type ListRow, type SortDirection, type SortedRowsCache } from './list-order.js'
import { parseQuery, type SearchQuery } from '../search/tokenize.js'
import type { SiteSearch } from '../search/collection-search.js'
import { snippetOf } from '../search/entry-text.js'
import type { EntryView, Pagination } from '../api-shapes.js'

/** Page size of a list that asks for none. */
export const DEFAULT_PAGE_SIZE = 24
/** Largest page a list answers (a larger `pageSize` is clamped). */
const MAX_PAGE_SIZE = 100

/** What a list or single read asks for. */
export interface ListEntriesInput {
  collection: string
  id?: string
  q?: string
  page: number
  pageSize: number
  /** The reading editor's drafts of this collection (empty without drafts). */
  drafts?: DraftEntry[]
  /** Sort by `id`, `title` or a field of the schema; absent: index order (or `q`'s). */
  sort?: string
  order?: SortDirection
  /** Only this editor's drafted entries, only the others, or all (default). */
  draft?: DraftFilter
  /** The instance's cache of sorted orders. */
  sortCache?: SortedRowsCache
  /** Only the entries of this locale (a multilingual collection's). */
  locale?: string
  /** The repository's work tree: a single read of a translation says which are outdated. */
  repoDir?: string
}

/** The spec's entries response. */
export interface ListEntriesResult {
  collection: string
  entries: EntryView[]
  pagination: Pagination
}

/** Lists a page of entries, or reads one. */
export async function listEntries (content: ContentStore, search: SiteSearch, input: ListEntriesInput): Promise<ListEntriesResult> {
  const index = await content.index(input.collection)
  const pageSize = Math.min(input.pageSize, MAX_PAGE_SIZE)
  const drafts = new Map<string, DraftRecord>()
  for (const d of input.drafts ?? []) if (!('legacy' in d)) drafts.set(d.id, d)
  const titleField = index.collection.titleField
  const layout = index.collection.i18n
  const locale = input.locale === undefined ? null : checkLocale(input.collection, layout, input.locale)

  if (input.id !== undefined) {
    index.checkFolder()
    index.checkId(input.id)
    const draft = drafts.get(input.id)
    if (draft !== undefined) {
      if (draft.kind === 'delete') throw new NotFoundError('Entry not found', { collection: input.collection, id: input.id })
      return { collection: input.collection, entries: [await withTranslations(input.repoDir, index, draftView(draft, layout))], pagination: paginate(1, pageSize, 1) }
    }
    const entry = await index.get(input.id)
    if (entry === null) throw new NotFoundError('Entry not found', { collection: input.collection, id: input.id })
    if (entry.readError !== undefined) {
      throw new UnreadableEntryError('Stored entry cannot be read', { collection: input.collection, id: input.id, readError: entry.readError, revision: entry.revision })
    }
    return { collection: input.collection, entries: [await withTranslations(input.repoDir, index, toEntryView(entry, layout))], pagination: paginate(1, pageSize, 1) }
  }

  const query = parseQuery(input.q)
  const sort = input.sort === undefined ? null : { field: input.sort, direction: input.order ?? 'asc' }
  const draftFilter = input.draft ?? 'all'
  // Ranked search: one page straight from the full-text index.
  if (query !== null && sort === null && draftFilter === 'all' && locale === null) return await searchPage(search, index, input.collection, query, drafts, input.page, pageSize)
  const all = await index.all()
  const start = (input.page - 1) * pageSize
  // Step 1, matching: the base rows `q` selects (in rank order), and the drafts it matches.
  let matching: readonly IndexRow[] = all
  let draftRecords: DraftRecord[] = [...drafts.values()].filter(d => d.kind !== 'delete')
  if (query !== null) {
    const found = (await search.entries(index, query, drafts, 0, Infinity)).entries
    matching = rowsInOrder(all, found.flatMap(hit => hit.draft === null ? [hit.id] : []))
    draftRecords = found.flatMap(hit => hit.draft ?? [])
  }
  if (locale !== null && layout !== null) {
    matching = matching.filter(row => localeOfId(layout, row.id)?.locale === locale)
    draftRecords = draftRecords.filter(d => localeOfId(layout, d.id)?.locale === locale)
    for (const [id] of drafts) if (localeOfId(layout, id)?.locale !== locale) drafts.delete(id)
  }
  // Step 2, order and draft state (list-order.ts): a cached sorted order, the drafts laid over.
  if (sort !== null) await checkSortField(content, index, all, sort, input.sortCache)
  const ordered = sort === null ? matching : sortMatching(input.collection, all, index.revision, matching, sort, input.sortCache)
  const { rows: pageRows, total } = overlayPage(ordered, drafts, draftRecords, {
    sort, titleField, start, size: pageSize, base: draftFilter !== 'only', drafted: draftFilter !== 'none'
  })
  const fresh = new Map((await index.freshen(pageRows.filter(isBase))).map(e => [e.id, e]))
  const entries: EntryView[] = []
  for (const row of pageRows) {
    if (!isBase(row)) { entries.push(await withSnippet(draftView(row, layout), query, titleField)); continue }
    const entry = fresh.get(row.id)
    if (entry !== undefined) entries.push(await withSnippet(toEntryView(entry, layout), query, titleField))
  }
  return { collection: input.collection, entries, pagination: paginate(input.page, pageSize, total) }
}

/** A page of the entries matching `q`, ranked, each with the snippet of its first matching field. */
async function searchPage (search: SiteSearch, index: CollectionIndex, collection: string, query: SearchQuery, drafts: Map<string, DraftRecord>, page: number, pageSize: number): Promise<ListEntriesResult> {
  const found = await search.entries(index, query, drafts, (page - 1) * pageSize, pageSize)
  const entries: EntryView[] = []
  for (const hit of found.entries) {
    // The search checked the folder (`index.all`) in this request: not again per hit (a realpath each).
    const entry = hit.draft === null ? await index.get(hit.id, { folderChecked: true }) : null
    const layout = index.collection.i18n
    const view = hit.draft !== null ? draftView(hit.draft, layout) : entry !== null ? toEntryView(entry, layout) : null
    if (view === null) continue
    entries.push(await withSnippet(view, query, index.collection.titleField))
  }
  return { collection, entries, pagination: paginate(page, pageSize, found.total) }
}

/** The rows of `ids` in that order (ids without a row are left out; allocates per match only). */
function rowsInOrder (all: readonly IndexRow[], ids: readonly string[]): IndexRow[] {
  const wanted = new Map<string, IndexRow | null>()
  for (const id of ids) wanted.set(id, null)
  for (const row of all) if (wanted.has(row.id)) wanted.set(row.id, row)
  const rows: IndexRow[] = []
  for (const row of wanted.values()) if (row !== null) rows.push(row)
  return rows
}

/** The view with the snippet of `q`'s first matching field (no `q`: unchanged), each in a turn (a page of 64: 0.5 s). */
async function withSnippet (view: EntryView, query: SearchQuery | null, titleField: string | null): Promise<EntryView> {
  if (query === null) return view
  await new Promise(resolve => setImmediate(resolve))
  const snippet = snippetOf(view.data, query, titleField)
  if (snippet !== null) view.snippet = snippet
  return view
}

function isBase (row: ListRow): row is IndexRow {
  return !('baseRevision' in row)
}

function draftView (draft: DraftRecord, layout: LocaleLayout | null): EntryView {
  return withLocale({ id: draft.id, data: draft.data, revision: draft.revision, draft: true }, layout)
}

/** `locale=` names one of the collection's locales (400 otherwise, and on a collection of one language). */
function checkLocale (collection: string, layout: LocaleLayout | null, locale: string): string {
  if (layout === null) throw new BadRequestError(`Collection ${collection} has no i18n: locale= does not apply`, { field: 'locale' })
  if (!layout.locales.includes(locale)) throw new BadRequestError(`locale must be one of ${layout.locales.join(', ')}`, { field: 'locale' })
  return locale
}

/** A single read's `translations` and `outdatedTranslations`: those whose source changed later on HEAD (CONTRACT 15). */
async function withTranslations (repoDir: string | undefined, index: CollectionIndex, view: EntryView): Promise<EntryView> {
  const layout = index.collection.i18n
  if (layout === null || view.translationKey === undefined) return view
  const ids = new Set((await index.all()).map(row => row.id))
  view.translations = translationsOf(layout, view.translationKey, id => ids.has(id))
  if (repoDir === undefined) return view
  const paths = new Map<string, string>()
  for (const [locale, id] of Object.entries(view.translations)) {
    const file = index.pathOf(id)
    if (file !== null) paths.set(locale, relativeSlashPath(repoDir, file))
  }
  const sourceLocale = layout.locales[0]
  const source = sourceLocale === undefined ? undefined : paths.get(sourceLocale)
  view.outdatedTranslations = []
  if (source === undefined) return view
  const last = await lastCommitsOf(repoDir, [...paths.values()])
  const sourceCommit = last.get(source)
  if (sourceCommit === undefined) return view
  for (const [locale, file] of paths) {
    const own = last.get(file)
    if (locale === sourceLocale || own === undefined || own.commit === sourceCommit.commit) continue
    // Later by commit time; commits of one second (scripts, tests) by ancestry.
    const later = sourceCommit.time !== own.time
      ? sourceCommit.time > own.time
      : await isAncestor(repoDir, own.commit, sourceCommit.commit).catch(() => false)
    if (later) view.outdatedTranslations.push(locale)
  }
  return view
}

/** An indexed entry as the API returns it. */
function toEntryView (entry: IndexedEntry, layout: LocaleLayout | null): EntryView {
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
function withLocale<T extends { id: string, locale?: string, translationKey?: string }> (view: T, layout: LocaleLayout | null): T {
  if (layout === null) return view
  const where = localeOfId(layout, view.id)
  if (where !== null) {
    view.locale = where.locale
    view.translationKey = where.translationKey
  }
  return view
}
