/**
 * The messages between `BoundedRenderer` and its worker thread.
 */
import type { RenderMarkdownOptions } from '../content/markdown/render.js'
import type { BlockEditResult } from '../content/markdown/block-edit.js'

/** One body to render (the thread answers with its HTML, through the WorkerPool's messages). */
export interface RenderJob {
  body: string
  opts: RenderMarkdownOptions
}

/** One body to outline for block editing (the thread answers with its BodyOutline). */
export interface OutlineJob {
  outline: { body: string, mdx: boolean }
}

/** One md_block edit of a body (the thread answers with a BlockEditReply). */
export interface BlockEditJob {
  blockEdit: { body: string, src: string, html: string, mdx: boolean }
}

/** An md_block edit's outcome: the new body, or why it was refused (the hint no longer fits, or the block cannot be edited). */
export type BlockEditReply = { result: BlockEditResult } | { refused: 'mismatch' | 'uneditable', message: string }

/** What the thread is asked. */
export type MarkdownJob = RenderJob | OutlineJob | BlockEditJob
