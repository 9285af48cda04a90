/**
 * An entry form's unsaved changes in localStorage: the fields that differ from the loaded values, with
 * the revision they were loaded at, so a reopened form can tell whether the entry moved.
 */
import { KeptRecords } from '../kept-records.js'

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

/** Each entry's record, under the key of its collection and id: at most 1,000,000 characters of JSON, written 300 ms after typing stops. */
export const unsavedRecords = new KeptRecords<UnsavedRecord>('git-cms:unsaved:v1:', 1_000_000, 300, r =>
  typeof r.revision === 'number' && typeof r.at === 'number' && typeof r.changes === 'object' && r.changes !== null &&
  !Array.isArray(r.changes) && Array.isArray(r.cleared) && r.cleared.every(k => typeof k === 'string') && hasChanges(r as UnsavedRecord))

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

/** Whether a record holds a change (one without is not kept). */
export const hasChanges = (record: UnsavedRecord): boolean => Object.keys(record.changes).length > 0 || record.cleared.length > 0
