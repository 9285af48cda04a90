/**
 * The order and draft state of a list. Numbers, ISO dates (as instants), strings (a fixed-locale
 * collator) and booleans compare by kind; any other value, or none, sorts last; ties go to the id.
 * The sorted base rows are kept per instance (sorting 100,000 rows by title takes 635 ms of CPU),
 * a change placing only the changed rows again; an editor's drafts are laid over per request.
 */
import { LRUCache } from 'lru-cache'
import { BadRequestError } from '../errors.js'
import { isMarkdownFormat } from '../content/formats.js'
import { titlesOf } from '../content/entry-search.js'
import type { ContentStore } from '../storage/content-store.js'
import type { CollectionIndex, IndexRow } from '../storage/collection-index.js'
import type { DraftRecord } from '../storage/draft-store.js'
import { isReservedKey } from '../content/reserved-keys.js'

/** Asc or desc. */
export type SortDirection = 'asc' | 'desc'

/** A comparable value: its kind (0 number, 1 date, 2 string, 3 boolean, 4 missing) and value. */
interface SortKey {
  kind: number
  num: number
  str: string
}

const MISSING = 4
// A date (`2019-03-08`), or a date and time with optional seconds, fraction and zone.
const ISO_DATE = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)\s*(Z|[+-]\d{2}:?\d{2})?)?$/

// Made on the first text comparison: at import, ICU's set-up cost 10-17 ms of every start.
let collator: Intl.Collator | null = null

/** The sort key of a field's value. */
function sortKeyOf (value: unknown): SortKey {
  if (typeof value === 'number') return Number.isFinite(value) ? { kind: 0, num: value, str: '' } : { kind: MISSING, num: 0, str: '' }
  if (typeof value === 'boolean') return { kind: 3, num: value ? 1 : 0, str: '' }
  if (typeof value === 'string') {
    const instant = dateValue(value)
    return instant === null ? { kind: 2, num: 0, str: value } : { kind: 1, num: instant, str: '' }
  }
  return { kind: MISSING, num: 0, str: '' }
}

/** Compares two keys (missing last whatever the direction), then the ids. */
function compareKeys (a: SortKey, aId: string, b: SortKey, bId: string, direction: SortDirection): number {
  let c = 0
  if (a.kind === MISSING || b.kind === MISSING) c = a.kind === b.kind ? 0 : a.kind === MISSING ? 1 : -1
  else {
    c = a.kind !== b.kind
      ? a.kind - b.kind
      : a.kind === 2 ? ((collator ??= new Intl.Collator('en', { numeric: true, usage: 'sort' })).compare(a.str, b.str) || (a.str < b.str ? -1 : a.str > b.str ? 1 : 0)) : a.num - b.num
    if (direction === 'desc') c = -c
  }
  if (c !== 0) return c
  return aId < bId ? -1 : aId > bId ? 1 : 0
}

/** An ISO date or date-time as milliseconds (no zone: UTC, so the server's zone never matters). */
function dateValue (text: string): number | null {
  if (text.length < 10 || text.length > 40) return null
  const m = ISO_DATE.exec(text)
  if (m === null) return null
  const zone = m[3] === undefined ? 'Z' : m[3].length === 5 ? `${m[3].slice(0, 3)}:${m[3].slice(3)}` : m[3]
  const time = m[2] === undefined ? '00:00:00' : m[2].length === 5 ? `${m[2]}:00` : m[2]
  const ms = Date.parse(`${m[1]}T${time}${zone}`)
  return Number.isNaN(ms) ? null : ms
}

/** What a list is sorted by: `id`, `title` (the entry's title as the index gives it), or a data field. */
export interface SortSpec {
  field: string
  direction: SortDirection
}

interface Sorted {
  rows: readonly IndexRow[]
  revision: number
  sorted: IndexRow[]
  /** Each sorted row's value when it was placed (a row changed in place has another). */
  vals: unknown[]
}

/** Sorted orders kept at most (each is one array of references to the index's rows). */
const MAX_ORDERS = 16

/** The sorted orders of one service instance. */
export class SortedRowsCache {
  readonly #orders = new LRUCache<string, Sorted>({ max: MAX_ORDERS })

  /** The index's rows (`CollectionIndex.all()`) sorted by a field, kept while the collection is unchanged; do not mutate. */
  sorted (collection: string, rows: readonly IndexRow[], revision: number, spec: SortSpec): readonly IndexRow[] {
    const key = `${collection}\u0000${spec.field}\u0000${spec.direction}`
    const hit = this.#orders.get(key)
    if (hit !== undefined && hit.rows === rows && hit.revision === revision) return hit.sorted
    const next = (hit === undefined ? null : updateSorted(hit, rows, spec)) ?? sortedWithKeys(rows, spec)
    next.revision = revision
    this.#orders.set(key, next)
    return next.sorted
  }

  /** Whether a current order for this field is kept (its field was accepted when it was made). */
  has (collection: string, rows: readonly IndexRow[], revision: number, spec: SortSpec): boolean {
    const hit = this.#orders.peek(`${collection}\u0000${spec.field}\u0000${spec.direction}`)
    return hit !== undefined && hit.rows === rows && hit.revision === revision
  }
}

/** The value a base row has for a sort field (`id`, `title` or a data field; undefined when absent). */
function rowValue (row: IndexRow, field: string): unknown {
  if (field === 'id') return row.id
  if (field === 'title') return row.title
  return row.fields !== undefined && Object.hasOwn(row.fields, field) ? row.fields[field] : undefined
}

/** Rows sorted into a new array, each key computed once and a permutation of row numbers sorted. */
export function sortRows (rows: readonly IndexRow[], spec: SortSpec): IndexRow[] {
  const keys: SortKey[] = new Array(rows.length)
  for (let i = 0; i < rows.length; i++) keys[i] = sortKeyOf(rowValue(rows[i] as IndexRow, spec.field))
  const perm = new Uint32Array(rows.length)
  for (let i = 0; i < perm.length; i++) perm[i] = i
  perm.sort((a, b) => compareKeys(keys[a] as SortKey, (rows[a] as IndexRow).id, keys[b] as SortKey, (rows[b] as IndexRow).id, spec.direction))
  const sorted: IndexRow[] = new Array(rows.length)
  for (let i = 0; i < perm.length; i++) sorted[i] = rows[perm[i] as number] as IndexRow
  return sorted
}

function sortedWithKeys (rows: readonly IndexRow[], spec: SortSpec): Sorted {
  const sorted = sortRows(rows, spec)
  const vals: unknown[] = new Array(sorted.length)
  for (let i = 0; i < sorted.length; i++) vals[i] = rowValue(sorted[i] as IndexRow, spec.field)
  return { rows, revision: 0, sorted, vals }
}

/** The previous order with the changed rows moved to where they now sort; null when a full sort is cheaper. */
function updateSorted (old: Sorted, rows: readonly IndexRow[], spec: SortSpec): Sorted | null {
  const limit = Math.max(64, rows.length >>> 5)
  const before = new Set(old.sorted)
  const moved: IndexRow[] = []
  for (const row of rows) {
    if (before.has(row)) continue
    moved.push(row)
    if (moved.length > limit) return null
  }
  const now = old.sorted.length - (rows.length - moved.length) > 0 ? new Set(rows) : null
  const kept: IndexRow[] = []
  const keptIndex: number[] = []
  for (let i = 0; i < old.sorted.length; i++) {
    const row = old.sorted[i] as IndexRow
    if (now !== null && !now.has(row)) continue
    // A row whose value changed in place is placed again.
    if (!Object.is(rowValue(row, spec.field), old.vals[i])) {
      moved.push(row)
      if (moved.length > limit) return null
      continue
    }
    kept.push(row)
    keptIndex.push(i)
  }
  const placed = moved.map(row => ({ row, key: sortKeyOf(rowValue(row, spec.field)) }))
  placed.sort((a, b) => compareKeys(a.key, a.row.id, b.key, b.row.id, spec.direction))
  const at = placed.map(p => insertionPoint(kept, p.key, p.row.id, spec))
  const total = kept.length + placed.length
  const next: Sorted = { rows, revision: 0, sorted: new Array(total), vals: new Array(total) }
  let j = 0
  let out = 0
  for (let i = 0; i <= kept.length; i++) {
    for (; j < placed.length && (at[j] as number) <= i; j++) {
      const p = placed[j] as { row: IndexRow }
      next.sorted[out] = p.row
      next.vals[out++] = rowValue(p.row, spec.field)
    }
    if (i === kept.length) break
    next.sorted[out] = kept[i] as IndexRow
    next.vals[out++] = old.vals[keptIndex[i] as number]
  }
  return next
}

/** The index before which a row with this key and id belongs in rows sorted by `spec` (binary search). */
function insertionPoint (sorted: readonly IndexRow[], key: SortKey, id: string, spec: SortSpec): number {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    const row = sorted[mid] as IndexRow
    if (compareKeys(sortKeyOf(rowValue(row, spec.field)), row.id, key, id, spec.direction) < 0) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** A list row: a base entry (the index's own row), or the editor's draft of one (a new entry, or an edited base one). */
export type ListRow = IndexRow | DraftRecord

/** Which entries a list shows by this editor's draft state. */
export type DraftFilter = 'all' | 'only' | 'none'

/**
 * Refuses (400, naming `sort`) a field that is neither `id`, `title` nor a property of the
 * collection's schema, or that is a Markdown body (kept out of the index).
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

/** The rows (all, or those `q` matched) in a field's order: the cached whole order, filtered when fewer, else sorted. */
export function sortMatching (collection: string, all: readonly IndexRow[], revision: number, matching: readonly IndexRow[], spec: SortSpec, cache: SortedRowsCache | undefined): readonly IndexRow[] {
  // Sorting m rows costs about m log m collator calls; filtering the cached order, n set lookups.
  if (cache === undefined || matching.length * 64 < all.length) return sortRows(matching, spec)
  const sorted = cache.sorted(collection, all, revision, spec)
  if (matching === all) return sorted
  // By id: the cached order may hold an older row object of an entry re-read without a new revision.
  const wanted = new Set(matching.map(r => r.id))
  return sorted.filter(r => wanted.has(r.id))
}

/** Options of `overlayPage`. */
interface OverlayOptions {
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
 * One page of base rows with an editor's drafts laid over (a drafted entry replaced or hidden, the
 * shown `draftRows` placed where they sort), and the number of rows in all.
 */
export function overlayPage (ordered: readonly IndexRow[], drafts: ReadonlyMap<string, DraftRecord>, draftRows: DraftRecord[], opts: OverlayOptions): { rows: ListRow[], total: number } {
  // No per-entry objects without drafts: V8 would put them of a big collection in the old generation for good.
  if (drafts.size === 0) return opts.base ? { rows: ordered.slice(opts.start, opts.start + opts.size), total: ordered.length } : { rows: [], total: 0 }
  const rows: ListRow[] = []
  let pos = 0
  const emit = (row: ListRow): void => {
    if (pos >= opts.start && pos < opts.start + opts.size) rows.push(row)
    pos++
  }
  const { sort } = opts
  if (sort === null) {
    const byId = new Map(draftRows.map(r => [r.id, r]))
    for (const row of ordered) {
      if (!drafts.has(row.id)) { if (opts.base) emit(row); continue }
      const draft = byId.get(row.id)
      if (draft === undefined) continue
      byId.delete(row.id)
      if (opts.drafted) emit(draft)
    }
    // Entries that exist only as this editor's drafts (or whose base `q` did not match), last.
    if (opts.drafted) for (const draft of [...byId.values()].sort((a, b) => a.id < b.id ? -1 : 1)) emit(draft)
    return { rows, total: pos }
  }
  const keyed = draftRows.map(row => ({ row, key: sortKeyOf(draftValue(row, sort.field, opts.titleField)) }))
  keyed.sort((a, b) => compareKeys(a.key, a.row.id, b.key, b.row.id, sort.direction))
  const at = keyed.map(k => insertionPoint(ordered, k.key, k.row.id, sort))
  let k = 0
  for (let i = 0; i < ordered.length; i++) {
    for (; k < keyed.length && (at[k] as number) <= i; k++) if (opts.drafted) emit((keyed[k] as { row: DraftRecord }).row)
    const row = ordered[i] as IndexRow
    if (opts.base && !drafts.has(row.id)) emit(row)
  }
  for (; k < keyed.length; k++) if (opts.drafted) emit((keyed[k] as { row: DraftRecord }).row)
  return { rows, total: pos }
}

/** The value a draft has for a sort field (its title as the index would compute it). */
function draftValue (draft: DraftRecord, field: string, titleField: string | null): unknown {
  if (field === 'id') return draft.id
  if (field === 'title') return titlesOf(draft.data, titleField)[0] ?? draft.id
  return draft.data !== undefined && Object.hasOwn(draft.data, field) ? draft.data[field] : undefined
}
