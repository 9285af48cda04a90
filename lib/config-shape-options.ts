/**
 * How the config schema is compiled, shared by the run-time compile and the validator generated
 * from it (scripts/generate-config-validator.mjs): the same options give the same checks and errors.
 */
import { createHash } from 'node:crypto'
import { configSchema } from './config-schema.js'

// The config schema is this package's own (tested): checking it against JSON Schema's meta-schema
// at every start only compiled the meta-schema, and the validator runs once per start, so ajv's
// code optimization pass is not worth its time either (together about two thirds of the compile
// time, issue 18).
/** Ajv's options for the config schema. */
export const CONFIG_AJV_OPTIONS = { allErrors: false, strict: false, validateSchema: false, code: { optimize: false } } as const

/**
 * The SHA-256 of the config schema, the compile options and ajv's version, as the generated
 * validator records it.
 * @param ajvVersion the installed ajv's version
 * @returns hex digest
 */
export function configSchemaDigest (ajvVersion: string): string {
  return createHash('sha256').update(JSON.stringify([configSchema, CONFIG_AJV_OPTIONS, ajvVersion])).digest('hex')
}
