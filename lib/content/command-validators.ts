/**
 * The validators of command bodies: those generated at build time, or, when that file came from
 * other schemas or options, compiled on first use (60 ms of CPU on a process's first write).
 */
import type { Ajv, ValidateFunction } from 'ajv'
import { createRequire } from 'node:module'
import { ajvVersion } from './ajv-version.js'
import { COMMAND_AJV_OPTIONS, commandSchemas, commandSchemasDigest, type CommandSchemaName } from './command-schema-table.js'
import { COMMAND_SCHEMAS_DIGEST, commandValidatorsGenerated } from './command-validators.generated.js'

/* Once per process: whether the generated validators are current, and the run-time compiles when
   they are not. A validator keeps no state between calls but its last `errors`, read synchronously. */
let generatedIsCurrent: boolean | null = null
let ajv: Ajv | null = null
const compiled = new Map<CommandSchemaName, ValidateFunction>()

/**
 * Whether the generated validators were made from these schemas, options and ajv version (they are
 * used then); for tests.
 */
export function commandValidatorsAreGenerated (): boolean {
  generatedIsCurrent ??= COMMAND_SCHEMAS_DIGEST === commandSchemasDigest(ajvVersion())
  return generatedIsCurrent
}

/** The validator of one command body: the generated one when current, else compiled now. */
export function commandValidator (name: CommandSchemaName): ValidateFunction {
  if (commandValidatorsAreGenerated()) return (commandValidatorsGenerated as Record<CommandSchemaName, ValidateFunction>)[name]
  let fn = compiled.get(name)
  if (fn === undefined) {
    ajv ??= new (createRequire(import.meta.url)('ajv') as typeof import('ajv')).Ajv({ ...COMMAND_AJV_OPTIONS })
    fn = ajv.compile(commandSchemas[name])
    compiled.set(name, fn)
  }
  return fn
}

/** The first error of a validator's last call: the field (dotted path) and why. */
export function firstCommandError (validate: ValidateFunction): { field: string, reason: string } {
  const err = validate.errors?.[0]
  if (err?.keyword === 'additionalProperties') return { field: String((err.params as { additionalProperty: string }).additionalProperty), reason: 'is not a known field' }
  if (err?.keyword === 'required') return { field: String((err.params as { missingProperty: string }).missingProperty), reason: 'is required' }
  const field = err === undefined ? '' : err.instancePath.replace(/^\//, '').replace(/\//g, '.')
  return { field, reason: err?.message ?? 'is invalid' }
}
