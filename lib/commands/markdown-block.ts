/**
 * `md_block`: save one rendered Markdown block into the editor's private draft; the server derives
 * the Markdown itself and records the edit so publish can merge it onto a newer base.
 */
import { BadRequestError, NotFoundError, StaleSourceError } from '../errors.js'
import { isMarkdownDraft, emptyMarkdownDraft, recordMarkdownEdit, mapBaseRange, type MarkdownDraft } from '../content/markdown/markdown-draft.js'
import { parseSourceHint, sourceHash, formatSourceHint } from '../content/markdown/source-hint.js'
import { htmlTooDeep, markdownTooDeep, MAX_HTML_NESTING, MAX_MARKDOWN_NESTING } from '../content/markdown/nesting-limit.js'
import { isMarkdownFormat } from '../content/formats.js'
import type { MdBlockCommand, MutateResult } from './command-schemas.js'
import { changeEntry } from './change-entry.js'
import type { BlockEditReply } from './bounded-render.js'
import type { BlockEditResult } from '../content/markdown/block-edit.js'
import { requireEntry, requirePermission, type CommandContext } from './command-context.js'

/** Which block of which entry an edit targets. */
export interface BlockTarget {
  collection: string
  id: string
  src: string
  expectedRevision?: number | null
  /** The command's name, for messages. */
  command: string
}

/**
 * Runs md_block.
 * @param ctx command context
 * @param cmd the validated command
 * @returns the draft's revision and the block's new hint (a page edits it again without a render)
 */
export async function markdownBlock (ctx: CommandContext, cmd: MdBlockCommand): Promise<MutateResult> {
  if (cmd.blockPath !== 'body') throw new BadRequestError('Only the Markdown body can be edited by block', { blockPath: cmd.blockPath })
  if (htmlTooDeep(cmd.html)) throw new BadRequestError(`html nests elements deeper than ${MAX_HTML_NESTING} levels`, { field: 'html' })
  const apply = offLoopEdit(async (body, checked, mdx) => await ctx.services.markdown.blockEdit({ body, src: checked, html: cmd.html, mdx }),
    (message) => new BadRequestError(message, { src: cmd.src }))
  const { revision, src } = await editMarkdownBlock(ctx, { ...cmd, command: 'md_block' }, apply)
  return { revision, ...(src !== undefined ? { src } : {}) }
}

/**
 * An `apply` for editMarkdownBlock whose edit is computed in a render thread (its parses may take
 * seconds), then applied inside the change when the body is still the one it was computed on.
 * @param compute the edit of a body, off the event loop
 * @param refused the error of a refusal other than a stale hint
 * @returns the apply function
 */
export function offLoopEdit<E extends BlockEditResult> (compute: (body: string, src: string, mdx: boolean) => Promise<BlockEditReply<E>>,
  refused: (message: string) => Error): (body: string, src: string, revision: number, mdx: boolean) => E {
  const computed = new Map<string, BlockEditReply<E>>()
  return (body, checked, current, mdx) => {
    const key = `${mdx ? 'mdx' : 'md'}:${checked}\n${body}`
    const reply = computed.get(key)
    if (reply === undefined) {
      throw new OffLoopWanted(current, async () => { computed.set(key, await compute(body, checked, mdx)) })
    }
    if ('result' in reply) return reply.result
    throw reply.refused === 'mismatch' ? new StaleSourceError(current) : refused(reply.message)
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

/**
 * One block edit of an entry's Markdown body, checked against the body the editor sees and saved
 * into their private draft; an edit that changes nothing writes nothing.
 * @param ctx command context
 * @param target the entry, the block's hint and the expected revision
 * @param apply computes the edit of the body (throws a CmsError to refuse)
 * @returns the revision, the block's hint in the saved body and the edit
 */
export async function editMarkdownBlock<E extends BlockEditResult> (ctx: CommandContext, target: BlockTarget, apply: (body: string, src: string, revision: number, mdx: boolean) => E): Promise<{ revision: number, src?: string, edit?: E }> {
  const { collection, id, def } = await requireEntry(ctx, target)
  if (!isMarkdownFormat(def.format)) throw new BadRequestError(`${target.command} needs a Markdown collection`, { collection })
  await requirePermission(ctx, 'edit', collection, id)
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
          edit = apply(body, checked, current.revision, def.format === 'mdx')
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
