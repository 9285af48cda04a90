/**
 * The messages between `BoundedRenderer` and its worker thread.
 */
import type { RenderMarkdownOptions } from '../content/markdown/render.js'

/** One body to render. */
export interface RenderJob {
  id: number
  body: string
  opts: RenderMarkdownOptions
}

/** The HTML of one job, or why it failed; or, once, that the worker is ready. */
export type RenderReply = { id: number, html: string } | { id: number, error: string } | { ready: true }
