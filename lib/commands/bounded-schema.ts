/**
 * Bounds on what `create_collection` accepts. Compiling a schema's time grows with the schema
 * (10,000 properties, 536 KB: 17 s), so it runs in a thread (content/thread-schema-compiler.ts,
 * within a time limit), and these bounds keep each compile short there (the largest schema allowed:
 * 1-1.8 s on 2 cores at a load of 25, a tenth of that idle) and a site's collections few (each
 * compiles on its first use, never all at once).
 */
import { BadRequestError, LimitExceededError, PayloadTooLargeError } from '../errors.js'
import { SchemaCompileError } from '../content/thread-schema-compiler.js'
import { MAX_DYNAMIC_COLLECTIONS, schemaOverLimit } from '../content/schema-bounds.js'
import type { JsonSchema, Validator } from '../content/schema-tools.js'
import type { Services } from '../services.js'
import { schemaRefusal } from '../storage/collection-registry.js'

export { MAX_SCHEMA_CHARS, MAX_SCHEMA_DEPTH, MAX_DYNAMIC_COLLECTIONS } from '../content/schema-bounds.js'

/**
 * Refuses a schema over the depth (422) or size (413) limit, before anything compiles it.
 * @param schema the schema from the request
 */
export function assertSchemaBounds (schema: unknown): void {
  const over = schemaOverLimit(schema)
  if (over === null) return
  if (over.kind === 'depth') throw new LimitExceededError(over.message, { field: 'schema', limit: over.limit })
  throw new PayloadTooLargeError(over.message, { field: 'schema', limit: over.limit, length: over.length })
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
 * @param collection the stored collection whose schema it is; none for create_collection's
 * @returns its validator; when the schema does not compile, 400 for create_collection's and 422
 * (`collection_refused`) for a stored one (it arrived through git); 422 when compiling is too costly
 */
export async function schemaValidator (services: Services, schema: JsonSchema, collection?: string): Promise<Validator> {
  try {
    return await services.content.schemas.validator(schema)
  } catch (err) {
    if (!(err instanceof SchemaCompileError)) throw err
    if (collection !== undefined) throw schemaRefusal(collection, err)
    if (err.tooCostly) throw new LimitExceededError(err.message, { field: 'schema' })
    throw new BadRequestError(`schema is not a valid JSON Schema: ${err.message}`, { field: 'schema' })
  }
}
