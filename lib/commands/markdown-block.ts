/**
 * `md_block` and `md_edit`: save one Markdown block into the editor's private draft, md_block from
 * its rendered HTML, md_edit from its text seen in a generator's DOM (CONTRACT 11 and 14). The
 * server derives the Markdown itself, in a render thread, and records the edit so publish can merge
 * it onto a newer base; an md_edit that cannot be placed exactly is a 422 with the reason.
 */
import { BadRequestError, NotFoundError, StaleSourceError, UnmappableEditError } from '../errors.js'
import { isMarkdownDraft, emptyMarkdownDraft, recordMarkdownEdit, mapBaseRange, type MarkdownDraft } from '../content/markdown/markdown-draft.js'
import { parseSourceHint, sourceHash, formatSourceHint } from '../content/markdown/source-hint.js'
import { htmlTooDeep, markdownTooDeep, MAX_HTML_NESTING, MAX_MARKDOWN_NESTING } from '../content/markdown/nesting-limit.js'
import { isMarkdownFormat } from '../content/formats.js'
import type { MdBlockCommand, MdEditCommand, MutateResult } from './command-schemas.js'
import { changeEntry } from './change-entry.js'
import type { BlockEditReply } from './bounded-render.js'
import type { BlockEditResult } from '../content/markdown/text-edit.js'
import { requireEntry, requirePermission, type CommandContext } from './command-context.js'
import { assertBlockEditableLength, outlineKey } from './markdown-body.js'

/**
 * Runs md_block.
 * @param ctx command context
 * @param cmd the validated command
 * @returns the draft's revision and the block's new hint (a page edits it again without a render)
 */
export async function markdownBlock (ctx: CommandContext, cmd: MdBlockCommand): Promise<MutateResult> {
  if (cmd.blockPath !== 'body') throw new BadRequestError('Only the Markdown body can be edited by block', { blockPath: cmd.blockPath })
  if (htmlTooDeep(cmd.html)) throw new BadRequestError(`html nests elements deeper than ${MAX_HTML_NESTING} levels`, { field: 'html' })
  const { revision, src } = await editMarkdownBlock(ctx, cmd,
    async (body, checked, mdx) => await ctx.services.markdown.edit({ blockEdit: { body, src: checked, html: cmd.html, mdx } }),
    (message) => new BadRequestError(message, { src: cmd.src }))
  return { revision, ...(src !== undefined ? { src } : {}) }
}

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
  const { revision, src, edit } = await editMarkdownBlock(ctx, cmd, async (body, checked, mdx) => {
    assertBlockEditableLength(body)
    const outline = outlines.get(outlineKey(body, mdx))
    const reply = await ctx.services.markdown.edit({ textEdit: { body, src: checked, before: cmd.before, after: cmd.after, marks: cmd.marks, mdx, outline } })
    if ('result' in reply && reply.result.outline !== null) outlines.set(outlineKey(reply.result.body, mdx), reply.result.outline)
    return reply
  }, (message) => new UnmappableEditError(message, { src: cmd.src }))
  return {
    revision,
    ...(src !== undefined ? { src } : {}),
    ...(src !== undefined && edit !== undefined ? { block: { src, text: edit.text } } : {})
  }
}

/** Thrown from inside a change whose body needs `prepare` run off the event loop first; the change then runs again. */
class OffLoopWanted extends Error {
  constructor (readonly revision: number, readonly prepare: () => Promise<void>) { super('off-loop work wanted') }
}

/** Thrown from inside the change to leave storage alone: the edit changes nothing. */
class UnchangedBlock<E> extends Error {
  constructor (readonly revision: number, readonly src: string, readonly edit: E) { super('unchanged') }
}

/** One block edit (computed off the event loop, then applied by running the change again) saved into the editor's draft. */
async function editMarkdownBlock<E extends BlockEditResult> (ctx: CommandContext, target: MdBlockCommand | MdEditCommand,
  compute: (body: string, src: string, mdx: boolean) => Promise<BlockEditReply<E>>, refused: (message: string) => Error): Promise<{ revision: number, src?: string, edit?: E }> {
  const { collection, id, def } = await requireEntry(ctx, target)
  if (!isMarkdownFormat(def.format)) throw new BadRequestError(`${target.type} needs a Markdown collection`, { collection })
  await requirePermission(ctx, 'edit', collection, id)
  const mdx = def.format === 'mdx'
  const computed = new Map<string, BlockEditReply<E>>()
  for (let attempt = 0; ; attempt++) {
    let src: string | undefined
    let edit: E | undefined
    try {
      const result = await changeEntry(ctx, {
        collection,
        id,
        expectedRevision: target.expectedRevision,
        action: 'save',
        target: 'draft',
        apply: (current) => {
          if (!current.exists || current.data === undefined) throw new NotFoundError('Entry not found', { collection, id })
          const body = typeof current.data.body === 'string' ? current.data.body : ''
          if (markdownTooDeep(body)) throw new BadRequestError(`The Markdown body nests deeper than ${MAX_MARKDOWN_NESTING} levels; edit it as a whole`, { field: 'body' })
          // Edits accumulate on the draft they continue; otherwise the body seen now is the base.
          const previous = current.draft?.markdown
          const draft = isMarkdownDraft(previous) && previous.body === body ? previous : emptyMarkdownDraft(body)
          const checked = draftHint(draft, target.src)
          const key = `${checked}\n${body}`
          const reply = computed.get(key)
          if (reply === undefined) {
            throw new OffLoopWanted(current.revision, async () => { computed.set(key, await compute(body, checked, mdx)) })
          }
          if (!('result' in reply)) throw reply.refused === 'mismatch' ? new StaleSourceError(current.revision) : refused(reply.message)
          edit = reply.result
          // A block sent back as it renders already is no edit: no draft is made or bumped.
          if (!edit.changed) throw new UnchangedBlock(current.revision, checked, edit)
          src = hintAfterEdit(body, edit.body, checked)
          const oldEnd = edit.end - (edit.body.length - body.length)
          return {
            data: { ...current.data, body: edit.body },
            markdown: recordMarkdownEdit(draft, edit.start, oldEnd, edit.body)
          }
        }
      })
      return { revision: result.revision, ...(src !== undefined ? { src } : {}), ...(edit !== undefined ? { edit } : {}) }
    } catch (err) {
      if (err instanceof UnchangedBlock) return { revision: err.revision, src: err.src, edit: err.edit as E }
      if (!(err instanceof OffLoopWanted)) throw err
      // Other saves kept changing the body under this one: its source hint is stale.
      if (attempt === 3) throw new StaleSourceError(err.revision)
      await err.prepare()
    }
  }
}

/** The edited block's hint in the new body (end moved by the growth), when nothing outside it changed. */
function hintAfterEdit (before: string, after: string, src: string): string | undefined {
  const hint = parseSourceHint(src)
  if (hint === null) return undefined
  const end = hint.end + after.length - before.length
  if (end <= hint.start) return undefined
  if (before.slice(0, hint.start) !== after.slice(0, hint.start) || before.slice(hint.end) !== after.slice(end)) return undefined
  return formatSourceHint(after, hint.start, end)
}

/** The hint to check: one that fits only the draft's base body (a published page) is mapped into the draft body. */
function draftHint (draft: MarkdownDraft, src: string): string {
  const hint = parseSourceHint(src)
  if (hint === null || draft.edits.length === 0) return src
  if (hint.end <= draft.body.length && sourceHash(draft.body.slice(hint.start, hint.end)) === hint.hash) return src
  if (hint.end > draft.baseBody.length || sourceHash(draft.baseBody.slice(hint.start, hint.end)) !== hint.hash) return src
  const mapped = mapBaseRange(draft, hint.start, hint.end)
  return mapped === null ? src : `${mapped.start}:${mapped.end}:${hint.hash}`
}
