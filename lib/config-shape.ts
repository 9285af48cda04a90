/**
 * The check of a config's shape against config-schema.ts: the validator generated at build time,
 * or, when that was made from another schema or options, one compiled now.
 */
import type { ErrorObject } from 'ajv'
import { createRequire } from 'node:module'
import { CONFIG_AJV_OPTIONS, configSchema, configSchemaDigest } from './config-schema.js'
import { CONFIG_SCHEMA_DIGEST, validateConfigSchema } from './config-shape.generated.js'
import { ajvVersion } from './content/ajv-version.js'

/** An ajv validator: true when valid, its errors on `errors` otherwise. */
export type ConfigShapeCheck = ((input: unknown) => boolean) & { errors?: ErrorObject[] | null }

let check: ConfigShapeCheck | null = null

/**
 * The config shape validator, made once per process: the generated one when it was made from this
 * schema and these options (ajv's compile cost 20-40 ms of every start), else compiled.
 */
export function configShapeCheck (): ConfigShapeCheck {
  check ??= configShapeCheckFor(CONFIG_SCHEMA_DIGEST)
  return check
}

/** The generated validator when the digest it records is the current one, else the schema compiled now. */
export function configShapeCheckFor (generatedDigest: string): ConfigShapeCheck {
  return generatedDigest === configSchemaDigest(ajvVersion())
    ? validateConfigSchema as ConfigShapeCheck
    : new (createRequire(import.meta.url)('ajv') as typeof import('ajv')).Ajv({ ...CONFIG_AJV_OPTIONS, code: { ...CONFIG_AJV_OPTIONS.code } }).compile(configSchema)
}
