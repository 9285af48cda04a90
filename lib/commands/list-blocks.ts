/**
 * `GET /blocks`: the source blocks of a Markdown (or MDX) body as the signed-in editor sees it
 * (their draft body when they have one), for the in-place editor to pair with the blocks the site's
 * generator rendered (CONTRACT 14): each block's hint, kind, plain text and whether it is editable.
 */
import { BadRequestError, LimitExceededError } from '../errors.js'
import { isMarkdownFormat } from '../content/formats.js'
import { requireEntry, type CommandContext } from './command-context.js'
import { editorBody, type RenderFieldInput } from './render-field.js'
import type { SourceBlock } from '../content/markdown/block-list.js'
import { bodyOutline } from './block-outlines.js'
import { RENDER_MAX_CHARS } from './bounded-render.js'

/** The longest body the in-place editor lists and edits block by block: the longest one rendered. */
export const MAX_BLOCK_BODY_CHARS = RENDER_MAX_CHARS

/** Refuses (422) a body too long for block editing. */
export function assertBlockEditableLength (body: string): void {
  if (body.length > MAX_BLOCK_BODY_CHARS) {
    throw new LimitExceededError(`The body is longer than ${MAX_BLOCK_BODY_CHARS.toLocaleString('en-US')} characters, the limit of in-place block editing; edit it in the Studio`, { field: 'body', limit: MAX_BLOCK_BODY_CHARS })
  }
}

/** The answer: the revision the blocks were read from and the blocks. */
export interface BlockList {
  revision: number
  blocks: SourceBlock[]
}

/**
 * Lists the source blocks of one entry's body.
 * @param ctx command context
 * @param input collection, id and field (only `body`, the default)
 * @returns the revision and the blocks
 */
export async function listBlocks (ctx: CommandContext, input: RenderFieldInput): Promise<BlockList> {
  const field = input.field ?? 'body'
  if (field !== 'body') throw new BadRequestError('Only the body of a Markdown entry has blocks', { field: 'field', value: typeof field === 'string' ? field.slice(0, 256) : typeof field })
  const { collection, id, def } = await requireEntry(ctx, input)
  if (!isMarkdownFormat(def.format)) throw new BadRequestError('Only the body of a Markdown entry has blocks', { field: 'field', collection })
  const { body, revision } = await editorBody(ctx, collection, id)
  assertBlockEditableLength(body)
  // The Markdown toolchain loads on first use, not at start-up.
  const { markdownTooDeep } = await import('../content/markdown/nesting-limit.js')
  // A body too deep to parse renders as plain text: nothing in it is a block.
  if (markdownTooDeep(body)) return { revision, blocks: [] }
  const outline = await bodyOutline(ctx.services, body, def.format === 'mdx')
  return { revision, blocks: outline.blocks }
}
