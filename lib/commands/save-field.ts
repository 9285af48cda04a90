/**
 * `save_field`: update one field of one entry (a dot path such as `a.b`).
 */
import { NotFoundError, BadRequestError } from '../errors.js'
import { parseFieldPath, setAtPath, assertNoPrototypeKeys } from '../content/field-path.js'
import { assertDataDepth } from '../content/data-depth.js'
import { assertCollectionName, assertEntryId } from '../storage/names.js'
import { isMarkdownFormat } from '../content/formats.js'
import type { SaveFieldCommand } from './command-schemas.js'
import { changeEntry } from './change-entry.js'
import { requireCollection, requirePermission, type CommandContext } from './command-context.js'

/**
 * Runs save_field.
 * @param ctx command context
 * @param cmd the validated command
 * @returns the entry's new revision
 */
export async function saveField (ctx: CommandContext, cmd: SaveFieldCommand): Promise<{ revision: number }> {
  const collection = assertCollectionName(cmd.collection)
  const id = assertEntryId(cmd.id)
  const segments = parseFieldPath(cmd.field)
  assertNoPrototypeKeys(cmd.value, 'value')
  assertDataDepth(cmd.value, 'value', segments.length)
  const def = await requireCollection(ctx, collection)
  await requirePermission(ctx, 'edit', collection, id)
  if (isMarkdownFormat(def.format) && segments[0] === 'body' && (segments.length > 1 || typeof cmd.value !== 'string')) {
    throw new BadRequestError('The Markdown body must be saved as a string', { field: 'value' })
  }
  const result = await changeEntry(ctx.services, {
    collection,
    id,
    identity: ctx.identity,
    expectedRevision: cmd.expectedRevision,
    target: 'follow',
    action: 'save',
    apply: (current) => {
      if (!current.exists) throw new NotFoundError('Entry not found', { collection, id })
      return { data: setAtPath(current.data ?? {}, segments, cmd.value) }
    }
  })
  return { revision: result.revision }
}
