/**
 * A Markdown body as the signed-in editor sees it (their draft body, else the base body).
 * `GET /render`: sanitized HTML with source hints into exactly the body md_block checks them against.
 * `GET /blocks`: its source blocks for the in-place editor (CONTRACT 14), from outlines kept per instance.
 * `POST /preview`: the Studio's unsaved Markdown, rendered.
 */
import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import { BadRequestError, LimitExceededError, NotFoundError, PayloadTooLargeError, UnreadableEntryError } from '../errors.js'
import { assertCollectionName, assertEntryId } from '../storage/names.js'
import { isMarkdownFormat } from '../content/formats.js'
import type { SourceBlock } from '../api-shapes.js'
import type { BodyOutline } from '../content/markdown/body-outline.js'
import { markdownTooDeep } from '../content/markdown/nesting-limit.js'
import { requireEntry, type CommandContext } from './command-context.js'
import { RENDER_MAX_CHARS, type BoundedRenderer } from './bounded-render.js'

/** What the route asks for (strings straight from the query; validated here). */
export interface RenderFieldInput {
  collection: unknown
  id: unknown
  /** The field path; `body` when absent. */
  field?: unknown
}

/** Characters of rendered HTML the cache keeps at most (about 32 MB in UTF-16). */
const RENDER_CACHE_CHARS = 16 * 1024 * 1024

/** An empty cache of renderField's HTML by entry and body digest (a 20 KB body renders in ~100 ms), owned by one service instance. */
export function createRenderCache (): LRUCache<string, string> {
  return new LRUCache<string, string>({ maxSize: RENDER_CACHE_CHARS, sizeCalculation: html => html.length + 64 })
}

/** The only field md_block edits by block, so the only one rendered with hints. */
const MARKDOWN_FIELD = 'body'

/** Renders one Markdown field of one entry for the inline editor (wrapper and hints included), with the revision the editor sees. */
export async function renderField (ctx: CommandContext, input: RenderFieldInput, cache: LRUCache<string, string>): Promise<{ html: string, revision: number }> {
  const { collection, id, mdx, body, revision } = await editorBody(ctx, input, 'Only the body of a Markdown entry can be rendered')
  const key = `${collection}\u0000${id}\u0000${createHash('sha256').update(body).digest('base64')}`
  let html = cache.get(key)
  if (html === undefined) {
    html = await ctx.services.markdown.render(body, { collection, id, blockPath: MARKDOWN_FIELD, mdx })
    cache.set(key, html)
  }
  return { html, revision }
}

/** The body md_block checks hints against (the editor's draft, else the base) and its revision; 400 `refusal` unless the field is a Markdown body. */
async function editorBody (ctx: CommandContext, input: RenderFieldInput, refusal: string): Promise<{ collection: string, id: string, mdx: boolean, body: string, revision: number }> {
  const field = input.field ?? MARKDOWN_FIELD
  if (field !== MARKDOWN_FIELD) throw new BadRequestError(refusal, { field: 'field', value: typeof field === 'string' ? field.slice(0, 256) : typeof field })
  const { collection, id, def } = await requireEntry(ctx, input)
  if (!isMarkdownFormat(def.format)) throw new BadRequestError(refusal, { field: 'field', collection })
  const mdx = def.format === 'mdx'
  const { services, identity } = ctx
  const index = await services.content.index(collection)
  const draft = await services.drafts.get(identity.id, collection, id)
  if (draft !== null) {
    if (draft.kind === 'delete' || draft.data === undefined) throw new NotFoundError('Entry not found', { collection, id })
    return { collection, id, mdx, body: bodyOf(draft.data), revision: draft.revision }
  }
  const entry = await index.get(id)
  if (entry === null) throw new NotFoundError('Entry not found', { collection, id })
  if (entry.readError !== undefined || entry.data === undefined) {
    throw new UnreadableEntryError('Stored entry cannot be read', { collection, id, readError: entry.readError, revision: entry.revision })
  }
  return { collection, id, mdx, body: bodyOf(entry.data), revision: entry.revision }
}

/** md_block treats a missing or non-string body as empty; so does the rendering. */
function bodyOf (data: Record<string, unknown>): string {
  const body = Object.hasOwn(data, MARKDOWN_FIELD) ? data[MARKDOWN_FIELD] : undefined
  return typeof body === 'string' ? body : ''
}

/** Refuses (422) a body too long for block editing: longer than the longest one rendered. */
export function assertBlockEditableLength (body: string): void {
  if (body.length > RENDER_MAX_CHARS) {
    throw new LimitExceededError(`The body is longer than ${RENDER_MAX_CHARS.toLocaleString('en-US')} characters, the limit of in-place block editing; edit it in the Studio`, { field: 'body', limit: RENDER_MAX_CHARS })
  }
}

/**
 * Lists the source blocks of one entry's body.
 * @param ctx command context
 * @param input collection, id and field (only `body`, the default)
 * @returns the revision the blocks were read from and the blocks
 */
export async function listBlocks (ctx: CommandContext, input: RenderFieldInput): Promise<{ revision: number, blocks: SourceBlock[] }> {
  const { mdx, body, revision } = await editorBody(ctx, input, 'Only the body of a Markdown entry has blocks')
  assertBlockEditableLength(body)
  // A body too deep to parse renders as plain text: nothing in it is a block.
  if (markdownTooDeep(body)) return { revision, blocks: [] }
  const { blockOutlines, markdown } = ctx.services
  const key = outlineKey(body, mdx)
  let outline = blockOutlines.get(key)
  if (outline === undefined) {
    // Parsed in a render thread (never on the event loop) and kept.
    outline = await markdown.outline(body, mdx)
    blockOutlines.set(key, outline)
  }
  return { revision, blocks: outline.blocks }
}

/** Outlines by body; owned by one service instance. */
export type BlockOutlineCache = LRUCache<string, BodyOutline>

/** What the cache holds at most, in characters of block text and hints (about 16 MB in UTF-16). */
const OUTLINE_CACHE_CHARS = 8 * 1024 * 1024

/** An empty outline cache for one service instance. */
export function createBlockOutlineCache (): BlockOutlineCache {
  return new LRUCache<string, BodyOutline>({
    maxSize: OUTLINE_CACHE_CHARS,
    sizeCalculation: outline => outline.blocks.reduce((n, b) => n + b.text.length + b.src.length + 64, 64 + 32 * outline.tops.length)
  })
}

/**
 * The key of a body's outline.
 * @param body the body
 * @param mdx whether it is parsed as MDX
 * @returns the key
 */
export function outlineKey (body: string, mdx: boolean): string {
  return `${mdx ? 'mdx' : 'md'}:${createHash('sha256').update(body).digest('base64')}`
}

/** The longest body (characters) the preview renders. */
const PREVIEW_MAX_CHARS = 500_000

/** Renders the unsaved Markdown of a request body `{ body, collection, id }`, sanitized, in a render thread. */
export async function previewMarkdown (input: Record<string, unknown>, renderer: BoundedRenderer): Promise<{ html: string }> {
  const { body } = input
  if (typeof body !== 'string') throw new BadRequestError('body must be a string', { field: 'body' })
  if (body.length > PREVIEW_MAX_CHARS) throw new PayloadTooLargeError(`body is longer than ${PREVIEW_MAX_CHARS} characters`, { field: 'body', limit: PREVIEW_MAX_CHARS })
  const collection = assertCollectionName(input.collection)
  const id = assertEntryId(input.id)
  return { html: await renderer.render(body, { collection, id }) }
}
