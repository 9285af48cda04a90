/**
 * Bounds on what `create_collection` accepts. Compiling a schema's time grows with the schema
 * (10,000 properties, 536 KB: 17 s), so it runs in a thread (content/thread-schema-compiler.ts,
 * within a time limit), and these bounds keep each compile short there (the largest schema allowed:
 * 1-1.8 s on 2 cores at a load of 25, a tenth of that idle) and a site's collections few (each
 * compiles on its first use, never all at once).
 */
import { BadRequestError, LimitExceededError, PayloadTooLargeError } from '../errors.js'
import { SchemaCompileError } from '../content/thread-schema-compiler.js'
import type { JsonSchema, Validator } from '../content/schema-tools.js'
import type { Services } from '../services.js'

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

/**
 * The validator of a collection's schema, compiled off the event loop (thread-schema-compiler.ts).
 * @param services the instance
 * @param schema the schema
 * @returns its validator; 400 when the schema does not compile, 422 when compiling it is too costly
 */
export async function schemaValidator (services: Services, schema: JsonSchema): Promise<Validator> {
  try {
    return await services.content.schemas.validator(schema)
  } catch (err) {
    if (!(err instanceof SchemaCompileError)) throw err
    if (err.tooCostly) throw new LimitExceededError(err.message, { field: 'schema' })
    throw new BadRequestError(`schema is not a valid JSON Schema: ${err.message}`, { field: 'schema' })
  }
}
