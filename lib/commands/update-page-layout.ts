/** `update_page_layout`: set the section composer state (`data[layoutField]`) of one entry. */
import { NotFoundError } from '../errors.js'
import { assertNoPrototypeKeys } from '../content/field-path.js'
import { assertDataDepth } from '../content/data-depth.js'
import { assertCollectionName, assertEntryId } from '../storage/names.js'
import type { UpdatePageLayoutCommand } from './command-schemas.js'
import { changeEntry } from './change-entry.js'
import { requireCollection, requirePermission, type CommandContext } from './command-context.js'

/** Runs update_page_layout (validated like any write; history action `save`) and gives the entry's new revision. */
export async function updatePageLayout (ctx: CommandContext, cmd: UpdatePageLayoutCommand): Promise<{ revision: number }> {
  const collection = assertCollectionName(cmd.collection)
  const id = assertEntryId(cmd.id)
  assertNoPrototypeKeys(cmd.layout, 'layout')
  assertDataDepth(cmd.layout, 'layout', 1)
  const def = await requireCollection(ctx, collection)
  await requirePermission(ctx, 'edit', collection, id)
  const result = await changeEntry(ctx.services, {
    collection,
    id,
    identity: ctx.identity,
    expectedRevision: cmd.expectedRevision,
    action: 'save',
    apply: (current) => {
      if (!current.exists) throw new NotFoundError('Entry not found', { collection, id })
      return { data: { ...current.data, [def.layoutField]: cmd.layout } }
    }
  })
  return { revision: result.revision }
}
