/** The worker thread of `BoundedRenderer`: one `MarkdownJob` in, its reply out; a slow parse holds it, never the event loop. */
import { toHtml } from 'hast-util-to-html'
import { renderMarkdown } from '../content/markdown/render.js'
import { plainTextTree } from '../content/markdown/nesting-limit.js'
import { parseOutline } from '../content/markdown/markdown-it-outline.js'
import type { BlockEditReply, MarkdownJob } from './bounded-render.js'
import { serveJobs } from '../content/worker-pool.js'

// The toolchain is loaded: the time limit of a job starts now, not while the thread starts.
serveJobs<MarkdownJob, string | BlockEditReply>(async job => {
  if ('outline' in job) return JSON.stringify(parseOutline(job.outline.body, { mdx: job.outline.mdx }))
  if ('blockEdit' in job) {
    // Loaded on the first md_block (rehype and the HTML-to-Markdown path), not by every render thread.
    const { applyBlockEdit } = await import('../content/markdown/block-edit.js')
    return await refusalsAsReplies(() => applyBlockEdit(job.blockEdit))
  }
  if ('textEdit' in job) {
    const { applyTextEdit } = await import('../content/markdown/text-edit.js')
    return await refusalsAsReplies(() => applyTextEdit(job.textEdit))
  }
  try {
    return renderMarkdown(job.body, job.opts)
  } catch (err) {
    // HTML nested thousands deep (not counted by the Markdown depth scan) overflows the stack: shown as text.
    if (err instanceof RangeError) return toHtml(plainTextTree(job.body, job.opts))
    throw err
  }
})

/** Runs an edit; the refusals the commands map to their own statuses travel as answers, not as errors. */
async function refusalsAsReplies<R> (edit: () => R): Promise<BlockEditReply<R>> {
  const { SourceMismatchError, UneditableBlockError, UnmappableEditError } = await import('../content/markdown/text-edit.js')
  try {
    return { result: edit() }
  } catch (err) {
    if (err instanceof SourceMismatchError) return { refused: 'mismatch', message: err.message }
    if (err instanceof UneditableBlockError || err instanceof UnmappableEditError) return { refused: 'edit', message: err.message }
    throw err
  }
}
