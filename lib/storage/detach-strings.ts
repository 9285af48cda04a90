/**
 * Parsers (yaml among them) return long strings as slices of their input, and a slice keeps
 * the whole input alive: one frontmatter title would keep its entire Markdown file in memory.
 * The index copies such strings before it keeps them.
 */

/** V8 copies substrings shorter than this; longer ones are slices of their parent. */
const SLICE_MIN_LENGTH = 13

/**
 * Replaces, in place, every long string in plain objects and arrays with a copy of its own.
 * @param value parsed data that nothing else holds yet
 * @returns the same value
 */
export function detachStrings<T> (value: T): T {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = detachValue(value[i])
  } else if (isPlainObject(value)) {
    const record: Record<string, unknown> = value
    // (An equal copy compares equal: assign without comparing.)
    for (const key of Object.keys(record)) record[key] = detachValue(record[key])
  }
  return value
}

/**
 * A copy of a long string that shares no memory with the text it was cut from.
 * @param s a string
 * @returns an equal string (itself when short)
 */
export function detachString (s: string): string {
  return s.length >= SLICE_MIN_LENGTH ? JSON.parse(JSON.stringify(s)) as string : s
}

function detachValue (v: unknown): unknown {
  return typeof v === 'string' ? detachString(v) : detachStrings(v)
}

function isPlainObject (v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false
  const proto = Object.getPrototypeOf(v) as unknown
  return proto === Object.prototype || proto === null
}
