/** Command body validators: generated at build time or, when made from other schemas, all compiled on first use (60 ms). */
import type { ValidateFunction } from 'ajv'
import { generatedOrCompiled } from './generated-validators.js'
import { COMMAND_AJV_OPTIONS, commandSchemas, type CommandSchemaName } from './command-schema-table.js'
import { COMMAND_SCHEMAS_DIGEST, commandValidatorsGenerated } from './command-validators.generated.js'
import { errorPath } from './schema-tools.js'

/* Made on the first check: the generated validators when made from these schemas, options and ajv version, else
   every schema compiled then. */
let validators: Record<CommandSchemaName, ValidateFunction> | undefined

/** The validator of one command body. */
export function commandValidator (name: CommandSchemaName): ValidateFunction {
  validators ??= generatedOrCompiled(COMMAND_SCHEMAS_DIGEST, commandValidatorsGenerated as Record<CommandSchemaName, ValidateFunction>, commandSchemas, COMMAND_AJV_OPTIONS,
    ajv => Object.fromEntries(Object.entries(commandSchemas).map(([name, schema]) => [name, ajv.compile(schema)])) as Record<CommandSchemaName, ValidateFunction>)
  return validators[name]
}

/** The first error of a validator's last call: the field (dotted path, as `errorPath` names it) and why. */
export function firstCommandError (validate: ValidateFunction): { field: string, reason: string } {
  const err = validate.errors?.[0]
  if (err === undefined) return { field: '', reason: 'is invalid' }
  if (err.keyword === 'additionalProperties') return { field: errorPath(err), reason: 'is not a known field' }
  if (err.keyword === 'required') return { field: errorPath(err), reason: 'is required' }
  return { field: errorPath(err), reason: err.message ?? 'is invalid' }
}
