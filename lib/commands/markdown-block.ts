/**
 * `md_block`: save one rendered Markdown block into the editor's private draft. The hint is
 * checked against the body the editor sees (their draft body when they have one); the server
 * derives the Markdown itself and records the edit so publish can merge it onto a newer base.
 */
import { BadRequestError, NotFoundError, StaleSourceError } from '../errors.js'
import { isMarkdownDraft, emptyMarkdownDraft, recordMarkdownEdit, mapBaseRange, type MarkdownDraft } from '../content/markdown/markdown-draft.js'
import { parseSourceHint, sourceHash } from '../content/markdown/source-hint.js'
import type { BlockEditResult } from '../content/markdown/block-edit.js'
import { assertCollectionName, assertEntryId } from '../storage/names.js'
import { isMarkdownFormat } from '../content/formats.js'
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
  try {
    return await saveBlock(ctx, cmd)
  } catch (err) {
    if (err instanceof UnchangedBlock) return { revision: err.revision }
    throw err
  }
}

/** Thrown from inside the change to leave storage alone: the edit changes nothing. */
class UnchangedBlock extends Error {
  constructor (readonly revision: number) { super('unchanged') }
}

async function saveBlock (ctx: CommandContext, cmd: MdBlockCommand): Promise<{ revision: number }> {
  const collection = assertCollectionName(cmd.collection)
  const id = assertEntryId(cmd.id)
  const def = await requireCollection(ctx, collection)
  if (!isMarkdownFormat(def.format)) throw new BadRequestError('md_block needs a Markdown collection', { collection })
  await requirePermission(ctx, 'edit', collection, id)
  if (cmd.blockPath !== 'body') throw new BadRequestError('Only the Markdown body can be edited by block', { blockPath: cmd.blockPath })
  // The Markdown toolchain (unified, remark, rehype) loads on first use, not at start-up.
  const { applyBlockEdit, SourceMismatchError, UneditableBlockError } = await import('../content/markdown/block-edit.js')
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
      // Edits accumulate on the draft they continue; otherwise the body seen now is the base.
      const previous = current.draft?.markdown
      const draft = isMarkdownDraft(previous) && previous.body === body ? previous : emptyMarkdownDraft(body)
      let edit: BlockEditResult
      try {
        edit = applyBlockEdit({ body, src: draftHint(draft, cmd.src), html: cmd.html })
      } catch (err) {
        if (err instanceof SourceMismatchError) throw new StaleSourceError(current.revision)
        if (err instanceof UneditableBlockError) throw new BadRequestError(err.message, { src: cmd.src })
        throw err
      }
      // A block sent back as it renders already is no edit: no draft is made or bumped.
      if (!edit.changed) throw new UnchangedBlock(current.revision)
      const oldEnd = edit.end - (edit.body.length - body.length)
      return {
        data: { ...current.data, body: edit.body },
        markdown: recordMarkdownEdit(draft, edit.start, oldEnd, edit.body)
      }
    }
  })
  return { revision: result.revision }
}

/**
 * The hint to check against the draft body. A hint that does not fit the draft body but fits the
 * base body the draft started from (the page was rendered from published content) is moved to
 * where that block is in the draft body, unless an earlier edit touched it.
 */
function draftHint (draft: MarkdownDraft, src: string): string {
  const hint = parseSourceHint(src)
  if (hint === null || draft.edits.length === 0) return src
  if (hint.end <= draft.body.length && sourceHash(draft.body.slice(hint.start, hint.end)) === hint.hash) return src
  if (hint.end > draft.baseBody.length || sourceHash(draft.baseBody.slice(hint.start, hint.end)) !== hint.hash) return src
  const mapped = mapBaseRange(draft, hint.start, hint.end)
  return mapped === null ? src : `${mapped.start}:${mapped.end}:${hint.hash}`
}
