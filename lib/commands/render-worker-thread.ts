/**
 * The worker thread that renders Markdown for `BoundedRenderer`: one `MarkdownJob` in, one
 * `PoolReply` out. A body whose parse is slow holds this thread, which can be ended, never the event loop.
 */
import { parentPort } from 'node:worker_threads'
import { toHtml } from 'hast-util-to-html'
import { renderMarkdown } from '../content/markdown/render.js'
import { plainTextTree } from '../content/markdown/nesting-limit.js'
import type { BodyOutline } from '../content/markdown/body-outline.js'
import { parseOutline } from '../content/markdown/markdown-it-outline.js'
import type { BlockEditJob, BlockEditReply, MarkdownJob, RenderJob } from './bounded-render.js'
import type { PoolReply, PoolRequest } from '../content/worker-pool.js'

parentPort?.on('message', (request: PoolRequest<MarkdownJob>) => {
  if ('leave' in request) parentPort?.close()
  else if ('outline' in request.job) parentPort?.postMessage(outline(request.id, request.job.outline))
  else if ('blockEdit' in request.job) void blockEdit(request.id, request.job.blockEdit).then(reply => parentPort?.postMessage(reply))
  else parentPort?.postMessage(render(request.id, request.job))
})
// The toolchain is loaded: the time limit of a job starts now, not while the thread starts.
parentPort?.postMessage({ ready: true } satisfies PoolReply<string>)

function outline (id: number, job: { body: string, mdx: boolean }): PoolReply<BodyOutline> {
  try {
    return { id, reply: parseOutline(job.body, { mdx: job.mdx }) }
  } catch (err) {
    return { id, error: err instanceof Error ? err.message : String(err) }
  }
}

async function blockEdit (id: number, job: BlockEditJob['blockEdit']): Promise<PoolReply<BlockEditReply>> {
  // Loaded on the first md_block (rehype and the HTML-to-Markdown path), not by every render thread.
  const { applyBlockEdit, SourceMismatchError, UneditableBlockError } = await import('../content/markdown/block-edit.js')
  try {
    return { id, reply: { result: applyBlockEdit(job) } }
  } catch (err) {
    // The two refusals the command maps to its own statuses travel as answers, not as errors.
    if (err instanceof SourceMismatchError) return { id, reply: { refused: 'mismatch', message: err.message } }
    if (err instanceof UneditableBlockError) return { id, reply: { refused: 'uneditable', message: err.message } }
    return { id, error: err instanceof Error ? err.message : String(err) }
  }
}

function render (id: number, job: RenderJob): PoolReply<string> {
  try {
    return { id, reply: renderMarkdown(job.body, job.opts) }
  } catch (err) {
    // The parser and tree walkers recurse once per nesting level: HTML nested thousands deep
    // (which the Markdown depth scan does not count) overflows the stack. Such a body is shown as
    // escaped text, as a body too deeply nested in Markdown is.
    if (err instanceof RangeError) return { id, reply: toHtml(plainTextTree(job.body, job.opts)) }
    return { id, error: err instanceof Error ? err.message : String(err) }
  }
}
