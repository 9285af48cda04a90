/**
 * Unsaved changes of an entry form kept in the browser's localStorage, so typing survives a crashed
 * or closed tab. One record per entry holds only the fields that differ from the values the form
 * was loaded with, stamped with the revision they were loaded at, so a reopened form can tell
 * whether the entry moved since.
 */

/** The prefix of every key this module writes. */
export const UNSAVED_PREFIX = 'git-cms:unsaved:v1:'
/** Records larger than this (characters of JSON) are not kept: localStorage is small. */
const UNSAVED_MAX_CHARS = 1_000_000
/** Records older than this are dropped when the Studio starts. */
const MAX_AGE_MS = 30 * 24 * 3600 * 1000

/** What is stored for one entry. */
export interface UnsavedRecord {
  /** The entry's revision the form was loaded (or last saved) at. */
  revision: number
  /** When the record was written (ms since the epoch). */
  at: number
  /** The changed top-level fields with their typed values. */
  changes: Record<string, unknown>
  /** Top-level fields the editor emptied (no value, which JSON cannot hold in `changes`). */
  cleared: string[]
}

/**
 * The storage key of an entry. Both parts are percent-encoded, so an id holding `/`, `:`, spaces
 * or apostrophes cannot collide with another collection's or entry's key.
 */
export function unsavedKey (collection: string, id: string): string {
  return `${UNSAVED_PREFIX}${encodeURIComponent(collection)}:${encodeURIComponent(id)}`
}

/** Whether two values have the same JSON. */
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

/** The fields of `values` that differ from `loaded`. */
export function diffValues (loaded: Record<string, unknown>, values: Record<string, unknown>): { changes: Record<string, unknown>, cleared: string[] } {
  const changes: Record<string, unknown> = {}
  const cleared: string[] = []
  for (const k of Object.keys(values)) {
    if (same(values[k], loaded[k])) continue
    if (values[k] === undefined) cleared.push(k)
    else changes[k] = values[k]
  }
  return { changes, cleared }
}

/** The form values with a record's changes applied over the given ones. */
export function applyRecord (base: Record<string, unknown>, record: UnsavedRecord): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base }
  for (const [k, v] of Object.entries(record.changes)) out[k] = v
  for (const k of record.cleared) out[k] = undefined
  return out
}

/** The part of the Web Storage API used here (this module also loads in Node tests). */
interface KeyValueStore {
  readonly length: number
  key: (i: number) => string | null
  getItem: (key: string) => string | null
  setItem: (key: string, value: string) => void
  removeItem: (key: string) => void
}

/** The browser's localStorage, or null where it is disabled or absent. */
function storage (): KeyValueStore | null {
  try { return (globalThis as { localStorage?: KeyValueStore }).localStorage ?? null } catch { return null }
}

/** Reads an entry's unsaved record, or null when there is none or it is not readable. */
export function readUnsaved (collection: string, id: string): UnsavedRecord | null {
  try {
    const raw = storage()?.getItem(unsavedKey(collection, id)) ?? null
    if (raw === null) return null
    const r = JSON.parse(raw) as Partial<UnsavedRecord>
    if (typeof r !== 'object' || r === null || typeof r.revision !== 'number' || typeof r.at !== 'number' ||
      typeof r.changes !== 'object' || r.changes === null || Array.isArray(r.changes) || !Array.isArray(r.cleared)) return null
    const cleared = r.cleared.filter((k): k is string => typeof k === 'string')
    if (Object.keys(r.changes).length === 0 && cleared.length === 0) return null
    return { revision: r.revision, at: r.at, changes: r.changes, cleared }
  } catch { return null }
}

/** Writes (or, with no changes, removes) an entry's unsaved record; false when the browser would not keep it. */
export function writeUnsaved (collection: string, id: string, record: UnsavedRecord): boolean {
  const store = storage()
  if (store === null) return false
  if (Object.keys(record.changes).length === 0 && record.cleared.length === 0) { clearUnsaved(collection, id); return true }
  try {
    const raw = JSON.stringify(record)
    if (raw.length > UNSAVED_MAX_CHARS) return false
    store.setItem(unsavedKey(collection, id), raw)
    return true
  } catch { return false }
}

/** Removes an entry's unsaved record. */
export function clearUnsaved (collection: string, id: string): void {
  try { storage()?.removeItem(unsavedKey(collection, id)) } catch {}
}

/** Drops records older than 30 days (and unreadable ones), so storage does not fill up. */
export function pruneUnsaved (now = Date.now()): void {
  const store = storage()
  if (store === null) return
  try {
    const stale: string[] = []
    for (let i = 0; i < store.length; i++) {
      const key = store.key(i)
      if (key === null || !key.startsWith(UNSAVED_PREFIX)) continue
      let at = 0
      try { at = (JSON.parse(store.getItem(key) ?? '{}') as { at?: unknown }).at as number } catch {}
      if (typeof at !== 'number' || now - at > MAX_AGE_MS) stale.push(key)
    }
    for (const key of stale) store.removeItem(key)
  } catch {}
}
