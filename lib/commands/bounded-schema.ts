/**
 * Bounds on what `create_collection` accepts. Compiling a schema is synchronous (ajv generates and
 * compiles a validator) and its time grows with the schema: 10,000 properties (536 KB) held the
 * event loop 17 s. Compile time grows about linearly with the properties (measured on 2 cores under a
 * load average of 25: 800 properties, 50 KB, 1.5 s; the largest schema allowed here, 1.0 s with its
 * first write; a tenth of that on an idle core), and at most MAX_DYNAMIC_COLLECTIONS of them keep a
 * start and the first list quick (each compiles on its first use, never all at once).
 */
import { LimitExceededError, PayloadTooLargeError } from '../errors.js'

/** Longest schema (characters of its JSON text) create_collection accepts. */
export const MAX_SCHEMA_CHARS = 16_384
/** Deepest nesting of objects and arrays in a schema (`allOf` in `allOf` counts two per level). */
export const MAX_SCHEMA_DEPTH = 24
/** Most dynamic collections a site may hold (create_collection beyond is a 422). */
export const MAX_DYNAMIC_COLLECTIONS = 100

/**
 * Refuses a schema over the depth (422) or size (413) limit, before anything compiles it.
 * @param schema the schema from the request
 */
export function assertSchemaBounds (schema: unknown): void {
  // Depth first and without recursion: the text's length is measured by JSON.stringify, which recurses.
  const stack: Array<[unknown, number]> = [[schema, 1]]
  while (stack.length > 0) {
    const [node, level] = stack.pop()!
    if (node === null || typeof node !== 'object') continue
    if (level > MAX_SCHEMA_DEPTH) {
      throw new LimitExceededError(`schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`, { field: 'schema', limit: MAX_SCHEMA_DEPTH })
    }
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, level + 1])
  }
  const chars = JSON.stringify(schema).length
  if (chars > MAX_SCHEMA_CHARS) {
    throw new PayloadTooLargeError(`schema is longer than ${MAX_SCHEMA_CHARS} characters of JSON`, { field: 'schema', limit: MAX_SCHEMA_CHARS, length: chars })
  }
}

/**
 * Refuses a new collection when the site already holds the most dynamic collections allowed.
 * @param count how many dynamic collections exist
 */
export function assertCollectionRoom (count: number): void {
  if (count >= MAX_DYNAMIC_COLLECTIONS) {
    throw new LimitExceededError(`a site holds at most ${MAX_DYNAMIC_COLLECTIONS} dynamic collections`, { field: 'collection', limit: MAX_DYNAMIC_COLLECTIONS })
  }
}
