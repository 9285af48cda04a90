/**
 * `GET /blocks`: the source blocks of a Markdown (or MDX) body as the signed-in editor sees it
 * (their draft body when they have one), for the in-place editor to pair with the blocks the site's
 * generator rendered (CONTRACT 14): each block's hint, kind, plain text and whether it is editable.
 */
import { BadRequestError } from '../errors.js'
import { isMarkdownFormat } from '../content/formats.js'
import { assertCollectionName, assertEntryId } from '../storage/names.js'
import { requireCollection, type CommandContext } from './command-context.js'
import { editorBody } from './render-field.js'
import { LimitExceededError } from '../errors.js'
import type { SourceBlock } from '../content/markdown/block-list.js'
import { outlineKey } from './block-outlines.js'

/**
 * The longest body the in-place editor lists and edits block by block. An edit with the body's
 * outline kept (block-outlines.ts) parses one top-level node (1 MB: 222 ms at load 21), but a body's
 * first list is one whole parse, which grows faster than the body (load 21: 20 KB 0.97 s, 1 MB 106 s;
 * ~65 ms for 20 KB on a quiet machine), so past this a body is edited whole, in the Studio.
 */
export const MAX_BLOCK_BODY_CHARS = 50_000

/**
 * Refuses (422) a body too long for block editing.
 * @param body the Markdown body
 */
export function assertBlockEditableLength (body: string): void {
  if (body.length > MAX_BLOCK_BODY_CHARS) {
    throw new LimitExceededError(`The body is longer than ${MAX_BLOCK_BODY_CHARS.toLocaleString('en-US')} characters, the limit of in-place block editing; edit it in the Studio`, { field: 'body', limit: MAX_BLOCK_BODY_CHARS })
  }
}

/** What the route asks for (strings straight from the query; validated here). */
export interface ListBlocksInput {
  collection: unknown
  id: unknown
  /** The field; only `body` (the default). */
  field?: unknown
}

/** The answer: the revision the blocks were read from and the blocks. */
export interface BlockList {
  revision: number
  blocks: SourceBlock[]
}

/**
 * Lists the source blocks of one entry's body.
 * @param ctx command context
 * @param input collection, id and field
 * @returns the revision and the blocks
 */
export async function listBlocks (ctx: CommandContext, input: ListBlocksInput): Promise<BlockList> {
  const collection = assertCollectionName(input.collection)
  const id = assertEntryId(input.id)
  const field = input.field ?? 'body'
  if (field !== 'body') throw new BadRequestError('Only the body of a Markdown entry has blocks', { field: 'field', value: typeof field === 'string' ? field.slice(0, 256) : typeof field })
  const def = await requireCollection(ctx, collection)
  if (!isMarkdownFormat(def.format)) throw new BadRequestError('Only the body of a Markdown entry has blocks', { field: 'field', collection })
  const { body, revision } = await editorBody(ctx, collection, id)
  assertBlockEditableLength(body)
  // The Markdown toolchain loads on first use, not at start-up.
  const { markdownTooDeep } = await import('../content/markdown/nesting-limit.js')
  // A body too deep to parse renders as plain text: nothing in it is a block.
  if (markdownTooDeep(body)) return { revision, blocks: [] }
  const mdx = def.format === 'mdx'
  const key = outlineKey(body, mdx)
  const known = ctx.services.blockOutlines.get(key)
  if (known !== undefined) return { revision, blocks: known.blocks }
  const { bodyParser } = await import('../content/markdown/parse-body.js')
  const { outlineOf } = await import('../content/markdown/body-outline.js')
  const outline = outlineOf(bodyParser({ mdx })(body), body)
  ctx.services.blockOutlines.set(key, outline)
  return { revision, blocks: outline.blocks }
}
