/**
 * `GET /render`: a Markdown field as the signed-in editor sees it (their draft body, else the base
 * body), sanitized, with renderMarkdown's `data-cms-md` wrapper and source hints. The hints are
 * offsets into exactly the body md_block checks them against, so every block can be edited without a 409.
 */
import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import { BadRequestError, NotFoundError, UnreadableEntryError } from '../errors.js'
import { parseFieldPath } from '../content/field-path.js'
import { requireEntry, type CommandContext } from './command-context.js'

/** What the route asks for (strings straight from the query; validated here). */
export interface RenderFieldInput {
  collection: unknown
  id: unknown
  /** The field path; `body` when absent. */
  field?: unknown
}

/** The rendered field and the revision it was rendered from. */
export interface RenderedField {
  html: string
  revision: number
}

/**
 * The HTML an instance keeps of its renderings, by entry, field and body digest: a page is loaded
 * far more often than its body changes, and rendering a 20 KB body takes about 100 ms.
 */
export type RenderCache = LRUCache<string, string>

/** Characters of rendered HTML the cache keeps at most (about 32 MB in UTF-16). */
const CACHE_CHARS = 16 * 1024 * 1024

/** An empty cache for renderField, owned by one service instance. */
export function createRenderCache (): RenderCache {
  return new LRUCache<string, string>({ maxSize: CACHE_CHARS, sizeCalculation: html => html.length + 64 })
}

/** The only field md_block edits by block, so the only one rendered with hints. */
const MARKDOWN_FIELD = 'body'
/** Longest field path accepted (a path is a few keys; anything longer is not a field of ours). */
const MAX_FIELD_LENGTH = 256

/** Renders one Markdown field of one entry for the inline editor (wrapper and hints included), with the revision the editor sees. */
export async function renderField (ctx: CommandContext, input: RenderFieldInput, cache?: RenderCache): Promise<RenderedField> {
  const field = input.field === undefined ? MARKDOWN_FIELD : input.field
  if (typeof field !== 'string' || field.length > MAX_FIELD_LENGTH) throw new BadRequestError('Invalid field path', { field: 'field' })
  parseFieldPath(field)
  const { collection, id, def } = await requireEntry(ctx, input)
  if ((def.format !== 'md' && def.format !== 'mdx') || field !== MARKDOWN_FIELD) {
    throw new BadRequestError('Only the body of a Markdown entry can be rendered', { field: 'field', collection, value: field })
  }
  const { body, revision } = await editorBody(ctx, collection, id)
  // The HTML is a function of the entry's name and the body alone (the hints are body offsets).
  const key = `${collection}\u0000${id}\u0000${field}\u0000${createHash('sha256').update(body).digest('base64')}`
  let html = cache?.get(key)
  if (html === undefined) {
    // In the instance's worker thread, within its time limit (a long or hostile body is a 422).
    html = await ctx.services.markdown.render(body, { collection, id, blockPath: field, mdx: def.format === 'mdx' })
    cache?.set(key, html)
  }
  return { html, revision }
}

/** The body md_block would check a hint against (the editor's draft body, else the base body) and the revision the editor sees. */
export async function editorBody (ctx: CommandContext, collection: string, id: string): Promise<{ body: string, revision: number }> {
  const { services, identity } = ctx
  const index = await services.content.index(collection)
  const draft = await services.drafts.get(identity.id, collection, id)
  if (draft !== null) {
    if (draft.kind === 'delete' || draft.data === undefined) throw new NotFoundError('Entry not found', { collection, id })
    return { body: bodyOf(draft.data), revision: draft.revision }
  }
  const entry = await index.get(id)
  if (entry === null) throw new NotFoundError('Entry not found', { collection, id })
  if (entry.readError !== undefined || entry.data === undefined) {
    throw new UnreadableEntryError('Stored entry cannot be read', { collection, id, readError: entry.readError, revision: entry.revision })
  }
  return { body: bodyOf(entry.data), revision: entry.revision }
}

/** md_block treats a missing or non-string body as empty; so does the rendering. */
function bodyOf (data: Record<string, unknown>): string {
  const body = Object.hasOwn(data, MARKDOWN_FIELD) ? data[MARKDOWN_FIELD] : undefined
  return typeof body === 'string' ? body : ''
}
