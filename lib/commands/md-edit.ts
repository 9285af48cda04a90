/**
 * `md_edit`: an edit of one Markdown block's text seen in a generator's DOM, written into the
 * editor's private draft at the source positions that changed (CONTRACT 11 and 14), as md_block
 * does; an edit that cannot be placed exactly is a 422 with the reason.
 */
import { BadRequestError, StaleSourceError, UnmappableEditError } from '../errors.js'
import type { MdEditCommand, MutateResult } from './command-schemas.js'
import type { CommandContext } from './command-context.js'
import { editMarkdownBlock, OffLoopWanted } from './markdown-block.js'
import { assertBlockEditableLength, bodyOutline, outlineKey } from './markdown-body.js'
import type { BodyOutline } from '../content/markdown/body-outline.js'

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
  const markdown = await import('../content/markdown/text-edit.js')
  const outlines = ctx.services.blockOutlines
  const { revision, src, edit } = await editMarkdownBlock(ctx, { ...cmd, command: 'md_edit' }, (body, checked, current, mdx) => {
    assertBlockEditableLength(body)
    const outline: BodyOutline | undefined = outlines.get(outlineKey(body, mdx))
    // Not kept: parsed off the event loop, then the edit runs again.
    if (outline === undefined) throw new OffLoopWanted(current, async () => { await bodyOutline(ctx.services, body, mdx) })
    try {
      const edit = markdown.applyTextEdit({ body, src: checked, before: cmd.before, after: cmd.after, marks: cmd.marks, mdx, outline })
      if (edit.outline !== null) outlines.set(outlineKey(edit.body, mdx), edit.outline)
      return edit
    } catch (err) {
      if (err instanceof markdown.SourceMismatchError) throw new StaleSourceError(current)
      if (err instanceof markdown.UneditableBlockError) throw new UnmappableEditError(err.message, { src: cmd.src })
      if (err instanceof markdown.UnmappableEditError) throw new UnmappableEditError(err.message, { src: cmd.src })
      throw err
    }
  })
  return {
    revision,
    ...(src !== undefined ? { src } : {}),
    ...(src !== undefined && edit !== undefined ? { block: { src, text: edit.text } } : {})
  }
}
