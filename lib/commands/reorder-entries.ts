/** `reorder_entries`: write each entry's 0-based position into its `orderField` (only changed ones, each snapshotted). */
import { BadRequestError, ForbiddenError, RevisionConflictError, UnreadableEntryError } from '../errors.js'
import { assertCollectionName, assertEntryId } from '../storage/names.js'
import type { ReorderEntriesCommand } from './command-schemas.js'
import { changeEntry } from './change-entry.js'
import { checkEntryScope, requireCollection, requirePermission, type CommandContext } from './command-context.js'

/**
 * Runs reorder_entries: every id of the collection exactly once (400 otherwise), 403 when the
 * collection is not orderable; `expectedRevision` is compared with the collection revision.
 */
export async function reorderEntries (ctx: CommandContext, cmd: ReorderEntriesCommand): Promise<{ revision: number }> {
  const collection = assertCollectionName(cmd.collection)
  const order = cmd.order.map(assertEntryId)
  const def = await requireCollection(ctx, collection)
  await checkEntryScope(ctx, collection, ...order)
  await requirePermission(ctx, 'edit', collection)
  if (!def.metadata.orderable) throw new ForbiddenError(`Collection ${collection} is not orderable`)
  const index = await ctx.services.content.index(collection)
  return await ctx.services.locks.run(`collection:${collection}`, async () => {
    const all = await index.all()
    const expected = cmd.expectedRevision ?? undefined
    if (expected !== undefined && expected !== index.revision) throw new RevisionConflictError(index.revision)
    const ids = new Set(all.map(e => e.id))
    const given = new Set(order)
    if (given.size !== order.length) throw new BadRequestError('order lists an id more than once', { field: 'order' })
    if (given.size !== ids.size || order.some(id => !ids.has(id))) {
      throw new BadRequestError('order must list every entry of the collection exactly once', { field: 'order' })
    }
    const unreadable = all.find(e => e.readError !== undefined)
    if (unreadable !== undefined) throw new UnreadableEntryError('An entry of the collection cannot be read', { id: unreadable.id })
    const byId = new Map(all.map(e => [e.id, e]))
    for (const [position, id] of order.entries()) {
      if (byId.get(id)?.fields?.[def.orderField] === position) continue
      await changeEntry(ctx, {
        collection,
        id,
        action: 'reorder',
        apply: (current) => {
          if (current.data === undefined) throw new UnreadableEntryError('An entry of the collection cannot be read', { id })
          if (current.data[def.orderField] === position) return { data: current.data }
          return { data: { ...current.data, [def.orderField]: position } }
        }
      })
    }
    return { revision: (await ctx.services.content.index(collection)).revision }
  })
}
