/** `save_field`: update one field of one entry (a dot path such as `a.b`). */
import { NotFoundError, BadRequestError } from '../errors.js'
import { parseFieldPath, setAtPath } from '../content/field-path.js'
import { assertRequestData } from '../content/data-depth.js'
import { isMarkdownFormat } from '../content/formats.js'
import type { SaveFieldCommand } from './command-schemas.js'
import { changeEntry } from './change-entry.js'
import { requireEntry, type CommandContext } from './command-context.js'

/**
 * Runs save_field.
 * @param ctx command context
 * @param cmd the validated command
 * @returns the entry's new revision
 */
export async function saveField (ctx: CommandContext, cmd: SaveFieldCommand): Promise<{ revision: number }> {
  const segments = parseFieldPath(cmd.field)
  assertRequestData(cmd.value, 'value', segments.length)
  const { collection, id, def } = await requireEntry(ctx, cmd, 'edit')
  if (isMarkdownFormat(def.format) && segments[0] === 'body' && (segments.length > 1 || typeof cmd.value !== 'string')) {
    throw new BadRequestError('The Markdown body must be saved as a string', { field: 'value' })
  }
  return await changeEntry(ctx, {
    collection,
    id,
    expectedRevision: cmd.expectedRevision,
    target: 'follow',
    action: 'save',
    apply: (current) => {
      if (!current.exists) throw new NotFoundError('Entry not found', { collection, id })
      return { data: setAtPath(current.data ?? {}, segments, cmd.value) }
    }
  })
}
