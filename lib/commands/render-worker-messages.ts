/**
 * The messages between `BoundedRenderer` and its worker thread.
 */
import type { RenderMarkdownOptions } from '../content/markdown/render.js'

/** One body to render (the thread answers with its HTML, through the WorkerPool's messages). */
export interface RenderJob {
  body: string
  opts: RenderMarkdownOptions
}
