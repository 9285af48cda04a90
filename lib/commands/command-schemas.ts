/**
 * The checks of every mutate command's body and of the history and publish bodies: the command's
 * validator (content/command-validators.ts), and a 400 naming the field otherwise.
 */
import type { ValidateFunction } from 'ajv'
import { BadRequestError } from '../errors.js'
import { commandSchemas, type CommandType, type MutateCommand, type PublishBody, type RestoreBody } from '../content/command-schema-table.js'
import { commandValidator, firstCommandError } from '../content/command-validators.js'

export type * from '../content/command-schema-table.js'

/** The validators of the command bodies; `commandValidators` gives them. */
export interface CommandValidators {
  /** Checks a mutate body and returns it typed; 400 with the reason otherwise. */
  mutate: (body: unknown) => MutateCommand
  restore: (body: unknown) => RestoreBody
  publish: (body: unknown) => PublishBody
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

/** The command validators, shared by every router and instance of the process. */
export function createCommandValidators (): CommandValidators {
  return validators
}

function check<T> (validate: ValidateFunction, body: unknown): T {
  if (validate(body)) return body as T
  const { field, reason } = firstCommandError(validate)
  throw new BadRequestError(`Invalid command: ${field === '' ? 'body' : field} ${reason}`, { field })
}
