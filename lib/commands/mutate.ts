/** `POST /mutate`: one command per request, dispatched through a table. */
import type { MutateCommand, CommandType, MutateResult } from './command-schemas.js'
import type { CommandContext } from './command-context.js'
import { saveField } from './save-field.js'
import { putEntry } from './put-entry.js'
import { deleteEntry } from './delete-entry.js'
import { reorderEntries } from './reorder-entries.js'
import { updatePageLayout } from './update-page-layout.js'
import { createCollection } from './create-collection.js'
import { deleteCollection } from './delete-collection.js'
import { markdownBlock } from './markdown-block.js'
import { markdownEdit } from './md-edit.js'

type Handler<T extends CommandType> = (ctx: CommandContext, cmd: Extract<MutateCommand, { type: T }>) => Promise<MutateResult>

const HANDLERS: { [T in CommandType]: Handler<T> } = {
  save_field: saveField,
  put_entry: putEntry,
  delete_entry: deleteEntry,
  reorder_entries: reorderEntries,
  update_page_layout: updatePageLayout,
  md_block: markdownBlock,
  md_edit: markdownEdit,
  create_collection: createCollection,
  delete_collection: deleteCollection
}

/**
 * Executes one validated command.
 * @param ctx command context
 * @param cmd the command
 * @returns the spec's success body (md_block adds the saved block's new `src`, md_edit also `block`)
 */
export async function mutate (ctx: CommandContext, cmd: MutateCommand): Promise<{ ok: true } & MutateResult> {
  const handler = HANDLERS[cmd.type] as Handler<CommandType>
  return { ok: true, ...await handler(ctx, cmd as never) }
}
