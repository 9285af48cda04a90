/**
 * The options of the draft-07 ajv instance that checks and compiles collection schemas
 * (schema-tools.ts; its pattern engine is added there), shared with the draft-07 meta-schema
 * validator generated from them at build time (scripts/generate-config-validator.mjs).
 */
import { createHash } from 'node:crypto'

/** Ajv's options for draft-07 collection schemas, but the pattern engine. */
export const DRAFT7_AJV_OPTIONS = { allErrors: true, strict: false } as const

/**
 * The digest the generated draft-07 meta-schema validator records: ajv's version and the options.
 */
export function draft7MetaDigest (ajvVersion: string): string {
  return createHash('sha256').update(JSON.stringify(['draft-07 meta-schema', ajvVersion, DRAFT7_AJV_OPTIONS])).digest('hex')
}
