/**
 * How list sorting compares two values of one field: numbers as numbers, ISO dates as instants,
 * strings with a fixed-locale collator (so the order never depends on the server's locale),
 * booleans false before true; a value of any other kind, or none, always sorts last. Ties go to
 * the entry id, so the order is total and the same on every request.
 */

/** Asc or desc. */
export type SortDirection = 'asc' | 'desc'

/** A comparable value: its kind (0 number, 1 date, 2 string, 3 boolean, 4 missing) and value. */
export interface SortKey {
  kind: number
  num: number
  str: string
}

const MISSING = 4
// A date (`2019-03-08`), or a date and time with optional seconds, fraction and zone.
const ISO_DATE = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)\s*(Z|[+-]\d{2}:?\d{2})?)?$/

/* One collator for the process (fixed locale, numeric runs as numbers), made on the first text
   comparison: made at import, ICU's set-up cost 10-17 ms of every start. */
let collator: Intl.Collator | null = null

/** The sort key of a field's value. */
export function sortKeyOf (value: unknown): SortKey {
  if (typeof value === 'number') return Number.isFinite(value) ? { kind: 0, num: value, str: '' } : { kind: MISSING, num: 0, str: '' }
  if (typeof value === 'boolean') return { kind: 3, num: value ? 1 : 0, str: '' }
  if (typeof value === 'string') {
    const instant = dateValue(value)
    return instant === null ? { kind: 2, num: 0, str: value } : { kind: 1, num: instant, str: '' }
  }
  return { kind: MISSING, num: 0, str: '' }
}

/** Compares two keys (missing last whatever the direction), then the ids. */
export function compareKeys (a: SortKey, aId: string, b: SortKey, bId: string, direction: SortDirection): number {
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
