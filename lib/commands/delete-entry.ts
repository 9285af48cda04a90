/** `delete_entry`: remove an entry (its history stays, so a restore brings it back). */
import { ForbiddenError, NotFoundError } from '../errors.js'
import type { DeleteEntryCommand } from './command-schemas.js'
import { changeEntry } from './change-entry.js'
import { requireEntry, type CommandContext } from './command-context.js'

/** Runs delete_entry (403 when the collection is not deletable, 404 without the entry); gives the deletion's revision. */
export async function deleteEntry (ctx: CommandContext, cmd: DeleteEntryCommand): Promise<{ revision: number }> {
  const { collection, id, def } = await requireEntry(ctx, cmd, 'delete')
  if (!def.metadata.deletable) throw new ForbiddenError(`Collection ${collection} does not allow deleting entries`)
  return await changeEntry(ctx, {
    collection,
    id,
    expectedRevision: cmd.expectedRevision,
    action: 'delete',
    replacesUnreadable: true,
    apply: (current) => {
      if (!current.exists) throw new NotFoundError('Entry not found', { collection, id })
      return { data: null }
    }
  })
}
