/**
 * How the config schema is compiled, shared by the run-time compile and the validator generated
 * from it (scripts/generate-config-validator.mjs): the same options give the same checks and errors.
 */
import { createHash } from 'node:crypto'
import { configSchema } from './config-schema.js'

// The schema is this package's own (tested), so it is not checked against the meta-schema; the
// validator runs once per start, so ajv's code optimization is not worth its time either.
/** Ajv's options for the config schema. */
export const CONFIG_AJV_OPTIONS = { allErrors: false, strict: false, validateSchema: false, code: { optimize: false } } as const

/**
 * The SHA-256 of the config schema, the compile options and ajv's version, as the generated
 * validator records it.
 */
export function configSchemaDigest (ajvVersion: string): string {
  return createHash('sha256').update(JSON.stringify([configSchema, CONFIG_AJV_OPTIONS, ajvVersion])).digest('hex')
}
