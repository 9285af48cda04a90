/**
 * Bounds on what `create_collection` accepts. A schema compiles in a thread with a time limit
 * (content/thread-schema-compiler.ts); these bounds keep each compile short there (the largest
 * schema allowed: about 0.1-0.2 s idle) and a site's collections few.
 */
import { BadRequestError, LimitExceededError, PayloadTooLargeError } from '../errors.js'
import { SchemaCompileError } from '../content/thread-schema-compiler.js'
import { MAX_DYNAMIC_COLLECTIONS, schemaOverLimit } from '../content/data-depth.js'
import type { JsonSchema, Validator } from '../content/schema-tools.js'
import type { Services } from '../services.js'
import { schemaRefusal } from '../storage/collection-registry.js'

/** Refuses a schema over the depth (422) or size (413) limit, before anything compiles it. */
export function assertSchemaBounds (schema: unknown): void {
  const over = schemaOverLimit(schema)
  if (over === null) return
  if (over.kind === 'depth') throw new LimitExceededError(over.message, { field: 'schema', limit: over.limit })
  throw new PayloadTooLargeError(over.message, { field: 'schema', limit: over.limit, length: over.length })
}

/** Refuses a new collection when the site already holds `count`, the most dynamic collections allowed. */
export function assertCollectionRoom (count: number): void {
  if (count >= MAX_DYNAMIC_COLLECTIONS) {
    throw new LimitExceededError(`a site holds at most ${MAX_DYNAMIC_COLLECTIONS} dynamic collections`, { field: 'collection', limit: MAX_DYNAMIC_COLLECTIONS })
  }
}

/**
 * The validator of a schema, compiled off the event loop. A schema that does not compile is a 400
 * for create_collection's (no `collection`) and a 422 `collection_refused` for a stored
 * collection's (it arrived through git); one too costly to compile is a 422.
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
