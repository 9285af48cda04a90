/** `update_page_layout`: set the section composer state (`data[layoutField]`) of one entry. */
import { NotFoundError } from '../errors.js'
import { assertRequestData } from '../content/data-depth.js'
import type { UpdatePageLayoutCommand } from './command-schemas.js'
import { changeEntry } from './change-entry.js'
import { requireEntry, type CommandContext } from './command-context.js'

/** Runs update_page_layout (validated like any write; history action `save`) and gives the entry's new revision. */
export async function updatePageLayout (ctx: CommandContext, cmd: UpdatePageLayoutCommand): Promise<{ revision: number }> {
  assertRequestData(cmd.layout, 'layout', 1)
  const { collection, id, def } = await requireEntry(ctx, cmd, 'edit')
  return await changeEntry(ctx, {
    collection,
    id,
    expectedRevision: cmd.expectedRevision,
    action: 'save',
    apply: (current) => {
      if (!current.exists) throw new NotFoundError('Entry not found', { collection, id })
      return { data: { ...current.data, [def.layoutField]: cmd.layout } }
    }
  })
}
