/** The validators generated at build time (scripts/generate-config-validator.mjs): used when made from what a run-time compile would use. */
import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import type { Ajv } from 'ajv'

const requireHere = createRequire(import.meta.url)

/** Ajv's options for draft-07 collection schemas, but the pattern engine. */
export const DRAFT7_AJV_OPTIONS = { allErrors: true, strict: false } as const

/**
 * The digest a generated validator records: of what it was made from, ajv's options and the installed ajv's version.
 * @param source the schema, the schemas by name, or the meta-schema's name
 * @param options the ajv options it is compiled with
 * @returns a SHA-256, in hex
 */
export function validatorDigest (source: unknown, options: object): string {
  const { version } = requireHere('ajv/package.json') as { version: string }
  return createHash('sha256').update(JSON.stringify([source, options, version])).digest('hex')
}

/**
 * A generated validator when the digest it records is current, else one compiled now (ajv is loaded then).
 * @param digest the digest the generated module records
 * @param generated its validator (or validators)
 * @param source what it was made from, with `options`: as `validatorDigest` takes them
 * @param compile makes the same with an ajv instance of `options`
 * @returns `generated`, or what `compile` made
 */
export function generatedOrCompiled<T> (digest: string, generated: T, source: unknown, options: object, compile: (ajv: Ajv) => T): T {
  if (digest === validatorDigest(source, options)) return generated
  return compile(new (requireHere('ajv') as typeof import('ajv')).Ajv({ ...options }))
}
