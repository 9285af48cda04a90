/**
 * `md_edit`: an edit of one Markdown block's text seen in a generator's DOM, written into the
 * editor's private draft at the source positions that changed (CONTRACT 11 and 14), as md_block
 * does; an edit that cannot be placed exactly is a 422 with the reason.
 */
import { BadRequestError, UnmappableEditError } from '../errors.js'
import type { MdEditCommand, MutateResult } from './command-schemas.js'
import type { CommandContext } from './command-context.js'
import { editMarkdownBlock, offLoopEdit } from './markdown-block.js'
import { assertBlockEditableLength, outlineKey } from './markdown-body.js'

/**
 * Runs md_edit.
 * @param ctx command context
 * @param cmd the validated command
 * @returns the draft's revision and the block's new hint and text
 */
export async function markdownEdit (ctx: CommandContext, cmd: MdEditCommand): Promise<MutateResult> {
  if (cmd.field !== 'body') throw new BadRequestError('Only the Markdown body can be edited by block', { field: 'field', value: cmd.field })
  for (const mark of cmd.marks ?? []) {
    if (mark.end <= mark.start || mark.end > cmd.after.length) throw new BadRequestError('Invalid command: a mark\'s range must lie within after', { field: 'marks' })
    if ((mark.type === 'link') !== (mark.href !== undefined)) throw new BadRequestError('Invalid command: a link mark needs href, other marks take none', { field: 'marks' })
  }
  const outlines = ctx.services.blockOutlines
  // The kept outline of the body saves the thread a parse; the edit's outline of the new body is kept in turn.
  const apply = offLoopEdit(async (body, checked, mdx) => {
    assertBlockEditableLength(body)
    const outline = outlines.get(outlineKey(body, mdx))
    const reply = await ctx.services.markdown.textEdit({ body, src: checked, before: cmd.before, after: cmd.after, marks: cmd.marks, mdx, outline })
    if ('result' in reply && reply.result.outline !== null) outlines.set(outlineKey(reply.result.body, mdx), reply.result.outline)
    return reply
  }, (message) => new UnmappableEditError(message, { src: cmd.src }))
  const { revision, src, edit } = await editMarkdownBlock(ctx, { ...cmd, command: 'md_edit' }, apply)
  return {
    revision,
    ...(src !== undefined ? { src } : {}),
    ...(src !== undefined && edit !== undefined ? { block: { src, text: edit.text } } : {})
  }
}
