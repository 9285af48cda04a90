/**
 * An entry form's unsaved changes in localStorage: the fields that differ from the loaded values, with
 * the revision they were loaded at, so a reopened form can tell whether the entry moved.
 */
import { forgetRecord, keepRecord, readRecord } from '../kept-records.js'

/** The prefix of every key this module writes. */
export const UNSAVED_PREFIX = 'git-cms:unsaved:v1:'
/** Records larger than this (characters of JSON) are not kept: localStorage is small. */
const UNSAVED_MAX_CHARS = 1_000_000

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
export const sameValue = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

/** The fields of `values` that differ from `loaded`. */
export function diffValues (loaded: Record<string, unknown>, values: Record<string, unknown>): { changes: Record<string, unknown>, cleared: string[] } {
  const changes: Record<string, unknown> = {}
  const cleared: string[] = []
  for (const k of Object.keys(values)) {
    if (sameValue(values[k], loaded[k])) continue
    if (values[k] === undefined) cleared.push(k)
    else changes[k] = values[k]
  }
  return { changes, cleared }
}

/** The form values with a record's changes applied over the given ones. */
export function applyRecord (base: Record<string, unknown>, record: UnsavedRecord): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base, ...record.changes }
  for (const k of record.cleared) out[k] = undefined
  return out
}

/** Reads an entry's unsaved record, or null when there is none or it is not readable. */
export function readUnsaved (collection: string, id: string): UnsavedRecord | null {
  const r = readRecord(unsavedKey(collection, id)) as Partial<UnsavedRecord> | null
  if (r === null || typeof r.revision !== 'number' || typeof r.at !== 'number' ||
    typeof r.changes !== 'object' || r.changes === null || Array.isArray(r.changes) || !Array.isArray(r.cleared)) return null
  const cleared = r.cleared.filter((k): k is string => typeof k === 'string')
  if (Object.keys(r.changes).length === 0 && cleared.length === 0) return null
  return { revision: r.revision, at: r.at, changes: r.changes, cleared }
}

/** Writes (or, with no changes, removes) an entry's unsaved record; false when the browser would not keep it. */
export function writeUnsaved (collection: string, id: string, record: UnsavedRecord): boolean {
  if (Object.keys(record.changes).length > 0 || record.cleared.length > 0) return keepRecord(unsavedKey(collection, id), record, UNSAVED_MAX_CHARS)
  clearUnsaved(collection, id)
  return true
}

/** Removes an entry's unsaved record. */
export function clearUnsaved (collection: string, id: string): void {
  forgetRecord(unsavedKey(collection, id))
}
