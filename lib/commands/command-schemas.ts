/** The checks of the mutate, restore and publish bodies: a 400 naming the field, or the body typed. */
import type { ValidateFunction } from 'ajv'
import { BadRequestError } from '../errors.js'
import { commandSchemas, type CommandType, type MutateCommand, type PublishBody, type RestoreBody } from '../content/command-schema-table.js'
import { commandValidator, firstCommandError } from '../content/command-validators.js'

export type * from '../content/command-schema-table.js'

/** What a mutate command answers: the revision; md_block and md_edit the block's saved `data-cms-src`, md_edit its text. */
export interface MutateResult {
  revision: number
  src?: string
  block?: { src: string, text: string }
}

const mutateTypes = Object.keys(commandSchemas).filter(name => name !== 'restore' && name !== 'publish')

/** The validators of the command bodies: each returns the body typed, or throws a 400 with the reason. */
export const commandValidators = {
  mutate: (body: unknown): MutateCommand => {
    const type = (body as { type?: unknown }).type
    if (typeof type !== 'string' || !mutateTypes.includes(type)) {
      throw new BadRequestError(`Unknown command type; expected one of ${mutateTypes.join(', ')}`, { field: 'type' })
    }
    return check<MutateCommand>(commandValidator(type as CommandType), body)
  },
  restore: (body: unknown): RestoreBody => check<RestoreBody>(commandValidator('restore'), body),
  publish: (body: unknown): PublishBody => check<PublishBody>(commandValidator('publish'), body)
}

function check<T> (validate: ValidateFunction, body: unknown): T {
  if (validate(body)) return body as T
  const { field, reason } = firstCommandError(validate)
  throw new BadRequestError(`Invalid command: ${field === '' ? 'body' : field} ${reason}`, { field })
}
