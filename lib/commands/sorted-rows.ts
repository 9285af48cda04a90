/**
 * Base entries of a collection in the order of one field: sorted once per (collection, field,
 * direction) and kept until the collection changes (its index gives a new row list or revision),
 * so a list request of a 100,000-entry collection slices a ready array instead of sorting. After
 * a change, the few rows that changed are taken out and put back where they now sort (each row's
 * key is kept beside it, so a row changed in place is noticed too); many changes sort afresh.
 */
import type { IndexRow } from '../storage/collection-index.js'
import { compareKeys, sortKeyOf, type SortDirection, type SortKey } from './sort-keys.js'

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
  readonly #orders = new Map<string, Sorted>()

  /**
   * The rows sorted by a field, from the cache when the collection has not changed.
   * @param collection collection name
   * @param rows the index's rows (`CollectionIndex.all()`)
   * @param revision the collection's revision
   * @param spec field and direction
   * @returns the sorted rows (do not mutate)
   */
  sorted (collection: string, rows: readonly IndexRow[], revision: number, spec: SortSpec): readonly IndexRow[] {
    const key = `${collection}\u0000${spec.field}\u0000${spec.direction}`
    const hit = this.#orders.get(key)
    if (hit !== undefined && hit.rows === rows && hit.revision === revision) {
      this.#orders.delete(key)
      this.#orders.set(key, hit)
      return hit.sorted
    }
    const next = (hit === undefined ? null : updateSorted(hit, rows, spec)) ?? sortedWithKeys(rows, spec)
    next.revision = revision
    this.#orders.delete(key)
    this.#orders.set(key, next)
    if (this.#orders.size > MAX_ORDERS) this.#orders.delete(this.#orders.keys().next().value as string)
    return next.sorted
  }

  /**
   * Whether an order for this field is cached and current (its field was accepted then).
   * @param collection collection name
   * @param rows the index's rows
   * @param revision the collection's revision
   * @param spec field and direction
   * @returns true when `sorted` would not sort
   */
  has (collection: string, rows: readonly IndexRow[], revision: number, spec: SortSpec): boolean {
    const hit = this.#orders.get(`${collection}\u0000${spec.field}\u0000${spec.direction}`)
    return hit !== undefined && hit.rows === rows && hit.revision === revision
  }
}

/**
 * The value a base row has for a sort field.
 * @param row index row
 * @param field `id`, `title` or a data field
 * @returns the value (undefined when absent)
 */
export function rowValue (row: IndexRow, field: string): unknown {
  if (field === 'id') return row.id
  if (field === 'title') return row.title
  return row.fields !== undefined && Object.hasOwn(row.fields, field) ? row.fields[field] : undefined
}

/**
 * Sorts rows by a field without allocating an object per comparison: keys are computed once into
 * parallel arrays and a permutation of row numbers is sorted.
 * @param rows rows to sort
 * @param spec field and direction
 * @returns a new sorted array
 */
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
  return withKeys(rows, sortRows(rows, spec), spec)
}

function withKeys (rows: readonly IndexRow[], sorted: IndexRow[], spec: SortSpec): Sorted {
  const vals: unknown[] = new Array(sorted.length)
  for (let i = 0; i < sorted.length; i++) vals[i] = rowValue(sorted[i] as IndexRow, spec.field)
  return { rows, revision: 0, sorted, vals }
}

/**
 * The previous order with the rows that changed moved to where they now sort; null when too many
 * changed (a full sort is then cheaper).
 */
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

/**
 * Where a row with this key goes in rows sorted by `spec` (binary search).
 * @param sorted rows in `spec` order
 * @param key the new row's key
 * @param id the new row's id
 * @param spec field and direction
 * @returns the index before which it belongs
 */
export function insertionPoint (sorted: readonly IndexRow[], key: SortKey, id: string, spec: SortSpec): number {
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
