/**
 * Bounds on untrusted structure, checked before anything recursive touches it (a few thousand levels
 * overflow the stack): entry data's depth, a collection schema's size and depth, paging numbers.
 */
import { BadRequestError } from '../errors.js'
import { isReservedKey } from './reserved-keys.js'

/** The deepest nesting of objects and arrays an entry may have (the entry's data is level 1). */
export const MAX_DATA_DEPTH = 64

/** Whether a value nests deeper than MAX_DATA_DEPTH (by default); with `onKey`, which sees every object key, all of it is walked. */
export function dataTooDeep (value: unknown, levelsAbove = 0, maxDepth = MAX_DATA_DEPTH, onKey?: (key: string) => void): boolean {
  // Iterative, so any depth is measured without recursion.
  let deeper = false
  const stack: Array<[unknown, number]> = [[value, levelsAbove + 1]]
  while (stack.length > 0) {
    const [node, level] = stack.pop()!
    if (node === null || typeof node !== 'object') continue
    if (level > maxDepth) {
      if (onKey === undefined) return true
      deeper = true
    }
    if (Array.isArray(node)) { for (const child of node) stack.push([child, level + 1]); continue }
    for (const key of Object.keys(node)) {
      onKey?.(key)
      stack.push([(node as Record<string, unknown>)[key], level + 1])
    }
  }
  return deeper
}

/** Refuses entry data that nests deeper than MAX_DATA_DEPTH. */
export function assertDataDepth (data: unknown): void {
  if (dataTooDeep(data)) throw tooDeepError('data')
}

/**
 * Refuses request data holding a prototype key (`__proto__`, `prototype`, `constructor`) at any
 * depth, or nesting deeper than MAX_DATA_DEPTH counted from where it will be stored: one walk.
 * @param value the data a request writes
 * @param where what it is, named in the error (`data`, `value`, `layout`, `schema`)
 * @param levelsAbove the levels of the entry's data above where it will be stored
 */
export function assertRequestData (value: unknown, where = 'data', levelsAbove = 0): void {
  const forbid = (key: string): void => {
    if (isReservedKey(key)) throw new BadRequestError(`Invalid ${where}: forbidden key ${key}`, { field: where })
  }
  if (dataTooDeep(value, levelsAbove, MAX_DATA_DEPTH, forbid)) throw tooDeepError(where)
}

function tooDeepError (where: string): BadRequestError {
  return new BadRequestError(`Invalid ${where}: nested deeper than ${MAX_DATA_DEPTH} levels`, { field: where, maxDepth: MAX_DATA_DEPTH })
}

/** Longest schema (characters of its JSON text). */
export const MAX_SCHEMA_CHARS = 16_384
/** Deepest nesting of objects and arrays in a schema (`allOf` in `allOf` counts two per level). */
export const MAX_SCHEMA_DEPTH = 24
/** Most dynamic collections a site may hold. */
export const MAX_DYNAMIC_COLLECTIONS = 100

/** Why a site that holds `count` dynamic collections may not hold one more, or null. */
export function collectionCountOverLimit (count: number): string | null {
  return count >= MAX_DYNAMIC_COLLECTIONS ? `a site holds at most ${MAX_DYNAMIC_COLLECTIONS} dynamic collections` : null
}

/** Why a schema is over the depth or size bound, or null (depth first: JSON.stringify recurses). */
export function schemaOverLimit (schema: unknown): { kind: 'depth' | 'size', message: string, limit: number, length?: number } | null {
  if (dataTooDeep(schema, 0, MAX_SCHEMA_DEPTH)) return { kind: 'depth', message: `schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`, limit: MAX_SCHEMA_DEPTH }
  const chars = JSON.stringify(schema).length
  if (chars > MAX_SCHEMA_CHARS) return { kind: 'size', message: `schema is longer than ${MAX_SCHEMA_CHARS} characters of JSON`, limit: MAX_SCHEMA_CHARS, length: chars }
  return null
}

/**
 * A whole number of a query string, bounded in digits.
 * @param value the parameter's value
 * @param fallback the value when absent or empty
 * @param min the least value allowed
 * @param digits the most digits allowed
 * @returns the number, or null when it is not digits (at most `digits`) of at least `min`
 */
export function parseWholeNumber (value: string | undefined, fallback: number, min: number, digits: number): number | null {
  if (value === undefined || value === '') return fallback
  return value.length <= digits && /^[0-9]+$/.test(value) && Number(value) >= min ? Number(value) : null
}
