/** `delete_entry`: remove an entry (its history stays, so a restore brings it back). */
import { ForbiddenError, NotFoundError } from '../errors.js'
import { assertCollectionName, assertEntryId } from '../storage/names.js'
import type { DeleteEntryCommand } from './command-schemas.js'
import { changeEntry } from './change-entry.js'
import { requireCollection, requirePermission, type CommandContext } from './command-context.js'

/** Runs delete_entry (403 when the collection is not deletable, 404 without the entry); gives the deletion's revision. */
export async function deleteEntry (ctx: CommandContext, cmd: DeleteEntryCommand): Promise<{ revision: number }> {
  const collection = assertCollectionName(cmd.collection)
  const id = assertEntryId(cmd.id)
  const def = await requireCollection(ctx, collection)
  await requirePermission(ctx, 'delete', collection, id)
  if (!def.metadata.deletable) throw new ForbiddenError(`Collection ${collection} does not allow deleting entries`)
  const result = await changeEntry(ctx.services, {
    collection,
    id,
    identity: ctx.identity,
    expectedRevision: cmd.expectedRevision,
    action: 'delete',
    replacesUnreadable: true,
    apply: (current) => {
      if (!current.exists) throw new NotFoundError('Entry not found', { collection, id })
      return { data: null }
    }
  })
  return { revision: result.revision }
}
