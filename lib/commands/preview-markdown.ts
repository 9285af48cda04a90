/**
 * `POST /preview`: Markdown text the Studio's body editor holds, rendered by the same sanitized
 * `renderMarkdown` the site and `GET /render` use, so the live preview shows what will be published.
 */
import { BadRequestError, PayloadTooLargeError } from '../errors.js'
import { assertCollectionName, assertEntryId } from '../storage/names.js'

/** The longest body (characters) the preview renders. */
export const PREVIEW_MAX_CHARS = 500_000

/**
 * Renders a preview of unsaved Markdown.
 * @param input the request body: `{ body, collection, id }`
 * @returns `{ html }`, sanitized
 */
export async function previewMarkdown (input: Record<string, unknown>): Promise<{ html: string }> {
  const { body } = input
  if (typeof body !== 'string') throw new BadRequestError('body must be a string', { field: 'body' })
  if (body.length > PREVIEW_MAX_CHARS) throw new PayloadTooLargeError(`body is longer than ${PREVIEW_MAX_CHARS} characters`, { field: 'body', limit: PREVIEW_MAX_CHARS })
  const collection = assertCollectionName(input.collection)
  const id = assertEntryId(input.id)
  // The renderer (unified, micromark, parse5: a third of the server's code) loads on first use, so
  // a start and the reads never pay for it.
  const { renderMarkdown } = await import('../content/markdown/index.js')
  return { html: renderMarkdown(body, { collection, id }) }
}
