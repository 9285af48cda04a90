/**
 * `md_block`: save one rendered Markdown block into the editor's private draft. The hint is
 * checked against the body the editor sees (their draft body when they have one); the server
 * derives the Markdown itself and records the edit so publish can merge it onto a newer base.
 */
import { BadRequestError, NotFoundError, StaleSourceError } from '../errors.js'
import {
  applyBlockEdit, SourceMismatchError, UneditableBlockError,
  isMarkdownDraft, emptyMarkdownDraft, recordMarkdownEdit, type BlockEditResult
} from '../content/markdown/index.js'
import { assertCollectionName, assertEntryId } from '../storage/names.js'
import type { MdBlockCommand } from './command-schemas.js'
import { changeEntry } from './change-entry.js'
import { requireCollection, requirePermission, type CommandContext } from './command-context.js'

/**
 * Runs md_block.
 * @param ctx command context
 * @param cmd the validated command
 * @returns the draft's revision
 */
export async function markdownBlock (ctx: CommandContext, cmd: MdBlockCommand): Promise<{ revision: number }> {
  const collection = assertCollectionName(cmd.collection)
  const id = assertEntryId(cmd.id)
  const def = await requireCollection(ctx, collection)
  if (def.format !== 'md') throw new BadRequestError('md_block needs a Markdown collection', { collection })
  await requirePermission(ctx, 'edit', collection, id)
  if (cmd.blockPath !== 'body') throw new BadRequestError('Only the Markdown body can be edited by block', { blockPath: cmd.blockPath })
  const result = await changeEntry(ctx.services, {
    collection,
    id,
    identity: ctx.identity,
    expectedRevision: cmd.expectedRevision,
    action: 'save',
    target: 'draft',
    apply: (current) => {
      if (!current.exists || current.data === undefined) throw new NotFoundError('Entry not found', { collection, id })
      const body = typeof current.data.body === 'string' ? current.data.body : ''
      let edit: BlockEditResult
      try {
        edit = applyBlockEdit({ body, src: cmd.src, html: cmd.html })
      } catch (err) {
        if (err instanceof SourceMismatchError) throw new StaleSourceError(current.revision)
        if (err instanceof UneditableBlockError) throw new BadRequestError(err.message, { src: cmd.src })
        throw err
      }
      // Edits accumulate on the draft they continue; otherwise the body seen now is the base.
      const previous = current.draft?.markdown
      const draft = isMarkdownDraft(previous) && previous.body === body ? previous : emptyMarkdownDraft(body)
      const oldEnd = edit.end - (edit.body.length - body.length)
      return {
        data: { ...current.data, body: edit.body },
        markdown: recordMarkdownEdit(draft, edit.start, oldEnd, edit.body)
      }
    }
  })
  return { revision: result.revision }
}
