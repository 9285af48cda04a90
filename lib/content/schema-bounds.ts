/**
 * The bounds of a collection schema however it arrives (`create_collection` or git): its text's
 * length, its nesting, and how many dynamic collections a site holds, so compiles stay short.
 */
import { dataTooDeep } from './data-depth.js'

/** Longest schema (characters of its JSON text). */
export const MAX_SCHEMA_CHARS = 16_384
/** Deepest nesting of objects and arrays in a schema (`allOf` in `allOf` counts two per level). */
export const MAX_SCHEMA_DEPTH = 24
/** Most dynamic collections a site may hold. */
export const MAX_DYNAMIC_COLLECTIONS = 100

/** Why a schema is over a bound. */
export interface SchemaOverLimit {
  kind: 'depth' | 'size'
  message: string
  limit: number
  length?: number
}

/**
 * Why a schema is over the depth or size bound, or null; depth is measured iteratively first,
 * since JSON.stringify recurses.
 */
export function schemaOverLimit (schema: unknown): SchemaOverLimit | null {
  if (dataTooDeep(schema, 0, MAX_SCHEMA_DEPTH)) return { kind: 'depth', message: `schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`, limit: MAX_SCHEMA_DEPTH }
  const chars = JSON.stringify(schema).length
  if (chars > MAX_SCHEMA_CHARS) return { kind: 'size', message: `schema is longer than ${MAX_SCHEMA_CHARS} characters of JSON`, limit: MAX_SCHEMA_CHARS, length: chars }
  return null
}
