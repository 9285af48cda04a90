/** Command body validators: generated at build time or, when made from other schemas, all compiled on first use (60 ms). */
import type { ValidateFunction } from 'ajv'
import { createRequire } from 'node:module'
import { ajvVersion } from './ajv-version.js'
import { COMMAND_AJV_OPTIONS, commandSchemas, commandSchemasDigest, type CommandSchemaName } from './command-schema-table.js'
import { COMMAND_SCHEMAS_DIGEST, commandValidatorsGenerated } from './command-validators.generated.js'
import { errorPath } from './schema-tools.js'

/* Made on the first check: the generated validators when made from these schemas, options and ajv version, else
   every schema compiled then. */
let validators: Record<CommandSchemaName, ValidateFunction> | undefined

/** The validator of one command body. */
export function commandValidator (name: CommandSchemaName): ValidateFunction {
  validators ??= COMMAND_SCHEMAS_DIGEST === commandSchemasDigest(ajvVersion()) ? commandValidatorsGenerated as Record<CommandSchemaName, ValidateFunction> : compileAll()
  return validators[name]
}

function compileAll (): Record<CommandSchemaName, ValidateFunction> {
  const ajv = new (createRequire(import.meta.url)('ajv') as typeof import('ajv')).Ajv({ ...COMMAND_AJV_OPTIONS })
  return Object.fromEntries(Object.entries(commandSchemas).map(([name, schema]) => [name, ajv.compile(schema)])) as Record<CommandSchemaName, ValidateFunction>
}

/** The first error of a validator's last call: the field (dotted path, as `errorPath` names it) and why. */
export function firstCommandError (validate: ValidateFunction): { field: string, reason: string } {
  const err = validate.errors?.[0]
  if (err === undefined) return { field: '', reason: 'is invalid' }
  if (err.keyword === 'additionalProperties') return { field: errorPath(err), reason: 'is not a known field' }
  if (err.keyword === 'required') return { field: errorPath(err), reason: 'is required' }
  return { field: errorPath(err), reason: err.message ?? 'is invalid' }
}
