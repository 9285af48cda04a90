/**
 * The order and draft state of a list: the sort field checked against the collection's schema,
 * base rows sorted (from the instance's cache when the whole collection is listed), and one
 * editor's drafts laid over them per request, a page at a time.
 */
import { BadRequestError } from '../errors.js'
import { isMarkdownFormat } from '../content/formats.js'
import { titlesOf } from '../content/entry-search.js'
import type { ContentStore } from '../storage/content-store.js'
import type { CollectionIndex, IndexRow } from '../storage/collection-index.js'
import type { DraftRecord } from '../storage/draft-store.js'
import { compareKeys, sortKeyOf } from './sort-keys.js'
import { insertionPoint, sortRows, type SortSpec, type SortedRowsCache } from './sorted-rows.js'
import { isReservedKey } from '../content/reserved-keys.js'

/** An entry as this editor's draft has it (a new entry, or an edited base one). */
export interface DraftRow { kind: 'draft', record: DraftRecord }

/** A list row: a base entry (the index's own row), or the editor's draft of one. */
export type ListRow = IndexRow | DraftRow

/** Which entries a list shows by this editor's draft state. */
export type DraftFilter = 'all' | 'only' | 'none'

/**
 * Refuses (400, naming `sort`) a field that is neither `id`, `title` nor a property of the
 * collection's schema, or that is a Markdown body (kept out of the index); a field with a current
 * order in `cache` was checked when that order was made.
 */
export async function checkSortField (content: ContentStore, index: CollectionIndex, all: readonly IndexRow[], spec: SortSpec, cache: SortedRowsCache | undefined): Promise<void> {
  const { field } = spec
  if (field === 'id' || field === 'title') return
  const bad = (why: string): never => { throw new BadRequestError(`Query parameter sort: ${why}`, { field: 'sort' }) }
  if (isReservedKey(field)) bad(`${JSON.stringify(field)} is not a field name`)
  if (cache?.has(index.collection.name, all, index.revision, spec) === true) return
  if (field === 'body' && isMarkdownFormat(index.collection.format)) bad('the Markdown body cannot be sorted on')
  const schema = await content.schemaOf(index.collection)
  const props = schema.properties
  if (props === null || typeof props !== 'object' || !Object.hasOwn(props, field)) {
    const known = ['id', 'title', ...Object.keys(props ?? {}).filter(k => k !== 'body' || !isMarkdownFormat(index.collection.format))]
    bad(`unknown field ${JSON.stringify(field)} (sortable: ${[...new Set(known)].join(', ')})`)
  }
}

/**
 * The rows `q` matched (a subset of `all`) in a field's order: filtered out of the cached whole
 * order when they are many, sorted on their own when they are few.
 */
export function sortMatching (collection: string, all: readonly IndexRow[], revision: number, matching: readonly IndexRow[], spec: SortSpec, cache: SortedRowsCache | undefined): readonly IndexRow[] {
  // Sorting m rows costs about m log m collator calls; filtering the cached order, n set lookups.
  if (cache === undefined || matching.length * 64 < all.length) return sortRows(matching, spec)
  // By id, not identity: the cached order may hold an older row object of an entry the index
  // re-read without a new revision.
  const wanted = new Set(matching.map(r => r.id))
  return cache.sorted(collection, all, revision, spec).filter(r => wanted.has(r.id))
}

/** Options of `overlayPage`. */
export interface OverlayOptions {
  /** The order; null: base order, a draft in its base entry's place, new entries last by id. */
  sort: SortSpec | null
  titleField: string | null
  start: number
  size: number
  /** Show entries without a draft of this editor. */
  base: boolean
  /** Show this editor's drafted entries. */
  drafted: boolean
}

/**
 * One page of base rows (in list order) with an editor's drafts laid over, and the number of rows
 * in all: an entry with a draft (or a deletion) is replaced by its draft row (or hidden), and the
 * shown drafts (`draftRows`: not deletions, matching `q`) go where their values sort.
 */
export function overlayPage (ordered: readonly IndexRow[], drafts: ReadonlyMap<string, DraftRecord>, draftRows: DraftRow[], opts: OverlayOptions): { rows: ListRow[], total: number } {
  const rows: ListRow[] = []
  let pos = 0
  const emit = (row: ListRow): void => {
    if (pos >= opts.start && pos < opts.start + opts.size) rows.push(row)
    pos++
  }
  const { sort } = opts
  if (sort === null) {
    const byId = new Map(draftRows.map(r => [r.record.id, r]))
    for (const row of ordered) {
      if (!drafts.has(row.id)) { if (opts.base) emit(row); continue }
      const draft = byId.get(row.id)
      if (draft === undefined) continue
      byId.delete(row.id)
      if (opts.drafted) emit(draft)
    }
    // Entries that exist only as this editor's drafts (or whose base `q` did not match), last.
    if (opts.drafted) for (const draft of [...byId.values()].sort((a, b) => a.record.id < b.record.id ? -1 : 1)) emit(draft)
    return { rows, total: pos }
  }
  const keyed = draftRows.map(row => ({ row, key: sortKeyOf(draftValue(row.record, sort.field, opts.titleField)) }))
  keyed.sort((a, b) => compareKeys(a.key, a.row.record.id, b.key, b.row.record.id, sort.direction))
  const at = keyed.map(k => insertionPoint(ordered, k.key, k.row.record.id, sort))
  let k = 0
  for (let i = 0; i < ordered.length; i++) {
    for (; k < keyed.length && (at[k] as number) <= i; k++) if (opts.drafted) emit((keyed[k] as { row: DraftRow }).row)
    const row = ordered[i] as IndexRow
    if (opts.base && !drafts.has(row.id)) emit(row)
  }
  for (; k < keyed.length; k++) if (opts.drafted) emit((keyed[k] as { row: DraftRow }).row)
  return { rows, total: pos }
}

/** The value a draft has for a sort field (its title as the index would compute it). */
function draftValue (draft: DraftRecord, field: string, titleField: string | null): unknown {
  if (field === 'id') return draft.id
  if (field === 'title') return titlesOf(draft.data, titleField)[0] ?? draft.id
  return draft.data !== undefined && Object.hasOwn(draft.data, field) ? draft.data[field] : undefined
}
