/**
 * `POST /preview`: Markdown text the Studio's body editor holds, rendered by the same sanitized
 * `renderMarkdown` the site and `GET /render` use, so the live preview shows what will be published.
 */
import { BadRequestError, PayloadTooLargeError } from '../errors.js'
import { assertCollectionName, assertEntryId } from '../storage/names.js'
import type { BoundedRenderer } from './bounded-render.js'

/** The longest body (characters) the preview renders. */
const PREVIEW_MAX_CHARS = 500_000

/** Renders the unsaved Markdown of a request body `{ body, collection, id }`, sanitized. */
export async function previewMarkdown (input: Record<string, unknown>, renderer: BoundedRenderer): Promise<{ html: string }> {
  const { body } = input
  if (typeof body !== 'string') throw new BadRequestError('body must be a string', { field: 'body' })
  if (body.length > PREVIEW_MAX_CHARS) throw new PayloadTooLargeError(`body is longer than ${PREVIEW_MAX_CHARS} characters`, { field: 'body', limit: PREVIEW_MAX_CHARS })
  const collection = assertCollectionName(input.collection)
  const id = assertEntryId(input.id)
  // The worker (unified, micromark, parse5: a third of the server's code) starts on first use, so a
  // start and the reads never pay for it.
  return { html: await renderer.render(body, { collection, id }) }
}
