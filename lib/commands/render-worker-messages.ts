/**
 * The messages between `BoundedRenderer` and its worker thread.
 */
import type { RenderMarkdownOptions } from '../content/markdown/render.js'

/** One body to render (the thread answers with its HTML, through the WorkerPool's messages). */
export interface RenderJob {
  body: string
  opts: RenderMarkdownOptions
}

/** One body to outline for block editing (the thread answers with its BodyOutline). */
export interface OutlineJob {
  outline: { body: string, mdx: boolean }
}

/** What the thread is asked. */
export type MarkdownJob = RenderJob | OutlineJob
