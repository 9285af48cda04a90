/**
 * The checks of every mutate command's body and of the history and publish bodies, with the
 * validators ajv made at build time from command-schema-table.ts (command-validators.generated.ts,
 * by scripts/generate-config-validator.mjs), or when that file was made from other schemas or
 * options, the same validators compiled on first use (a first write then held the event loop
 * 60 ms of CPU on a quiet machine, 3-10 times that under load).
 */
import { Ajv, type ValidateFunction } from 'ajv'
import { BadRequestError } from '../errors.js'
import { ajvVersion } from '../content/ajv-version.js'
import { COMMAND_AJV_OPTIONS, commandSchemas, commandSchemasDigest, type CommandSchemaName, type CommandType, type MutateCommand, type PublishBody, type RestoreBody } from './command-schema-table.js'
import { COMMAND_SCHEMAS_DIGEST, commandValidatorsGenerated } from './command-validators.generated.js'

export type * from './command-schema-table.js'
export { MAX_BLOCK_TEXT, MAX_MARKS } from './command-schema-table.js'

/** The validators of the command bodies; `commandValidators` gives them. */
export interface CommandValidators {
  /**
   * Checks a mutate body and returns it typed; 400 with the reason otherwise.
   * @param body the parsed JSON body
   * @returns the command
   */
  mutate: (body: unknown) => MutateCommand
  restore: (body: unknown) => RestoreBody
  publish: (body: unknown) => PublishBody
}

/* Once per process: whether the generated validators are current, and the run-time compiles when
   they are not. A validator keeps no state between calls but its last `errors`, read synchronously. */
let generatedIsCurrent: boolean | null = null
let ajv: Ajv | null = null
const compiled = new Map<CommandSchemaName, ValidateFunction>()

/**
 * Whether the generated validators were made from these schemas, options and ajv version (they are
 * used then); for tests.
 * @returns true when command-validators.generated.ts is current
 */
export function commandValidatorsAreGenerated (): boolean {
  generatedIsCurrent ??= COMMAND_SCHEMAS_DIGEST === commandSchemasDigest(ajvVersion())
  return generatedIsCurrent
}

/**
 * The validator of one command body: the generated one when current, else compiled now.
 * @param name a mutate command's type, `restore` or `publish`
 * @returns the validator
 */
export function commandValidator (name: CommandSchemaName): ValidateFunction {
  if (commandValidatorsAreGenerated()) return (commandValidatorsGenerated as Record<CommandSchemaName, ValidateFunction>)[name]
  let fn = compiled.get(name)
  if (fn === undefined) {
    ajv ??= new Ajv({ ...COMMAND_AJV_OPTIONS })
    fn = ajv.compile(commandSchemas[name])
    compiled.set(name, fn)
  }
  return fn
}

const mutateTypes = Object.keys(commandSchemas).filter(name => name !== 'restore' && name !== 'publish')

const validators: CommandValidators = {
  mutate: (body) => {
    const type = (body as { type?: unknown }).type
    if (typeof type !== 'string' || !mutateTypes.includes(type)) {
      throw new BadRequestError(`Unknown command type; expected one of ${mutateTypes.join(', ')}`, { field: 'type' })
    }
    return check<MutateCommand>(commandValidator(type as CommandType), body)
  },
  restore: (body) => check<RestoreBody>(commandValidator('restore'), body),
  publish: (body) => check<PublishBody>(commandValidator('publish'), body)
}

/**
 * The command validators, shared by every router and instance of the process.
 * @returns the validators
 */
export function createCommandValidators (): CommandValidators {
  return validators
}

function check<T> (validate: ValidateFunction, body: unknown): T {
  if (validate(body)) return body as T
  const err = validate.errors?.[0]
  const where = err === undefined ? '' : err.instancePath.replace(/^\//, '').replace(/\//g, '.')
  let reason = err?.message ?? 'is invalid'
  let field = where
  if (err?.keyword === 'additionalProperties') {
    field = String((err.params as { additionalProperty: string }).additionalProperty)
    reason = 'is not a known field'
  } else if (err?.keyword === 'required') {
    field = String((err.params as { missingProperty: string }).missingProperty)
    reason = 'is required'
  }
  throw new BadRequestError(`Invalid command: ${field === '' ? 'body' : field} ${reason}`, { field })
}
