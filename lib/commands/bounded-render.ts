/**
 * Markdown rendering off the service's event loop, with a time and memory limit: a body's render
 * time does not follow its size (a 3.5 KB table padded to 600 columns took 27 s), so every render
 * runs in a worker thread, and one over the time limit (or the thread's heap) ends its thread: 422.
 */
import { getHeapStatistics } from 'node:v8'
import { RenderRefusedError } from '../errors.js'
import { WorkerPool } from '../content/worker-pool.js'
import type { RenderMarkdownOptions } from '../content/markdown/render.js'
import type { BodyOutline } from '../content/markdown/body-outline.js'
import type { BlockEditResult, TextEditInput, TextEditResult } from '../content/markdown/text-edit.js'

/** An edit of a body in the thread: md_block's (applyBlockEdit) or md_edit's (applyTextEdit). */
export type EditJob = { blockEdit: { body: string, src: string, html: string, mdx: boolean } } | { textEdit: TextEditInput }

/** An edit's outcome: the new body, or why it was refused (`mismatch`: the hint no longer fits; `edit`: the block cannot be edited or the edit placed). */
export type BlockEditReply<R = BlockEditResult> = { result: R } | { refused: 'mismatch' | 'edit', message: string }

/** What the render thread is asked: a render (answered with its HTML), a body's block outline (its BodyOutline as JSON), or an edit (a BlockEditReply). */
export type MarkdownJob = { body: string, opts: RenderMarkdownOptions } | { outline: { body: string, mdx: boolean } } | EditJob

/** Longest body (characters) rendered at all; a longer one is refused before any parse. */
export const RENDER_MAX_CHARS = 1_000_000
/** Default time one render may take (`CMS_RENDER_TIME_LIMIT_MS` overrides it). */
const RENDER_TIME_LIMIT_MS = 10_000
/** The worker's heap: the process's limit, at most 2,048 MB (a 384 MB cap took 1.4x the CPU in collections). */
const WORKER_HEAP_MB = Math.min(2048, Math.floor(getHeapStatistics().heap_size_limit / 2 ** 20))
/** The worker's stack, as the main thread's: HTML nested 5,000 deep overflows it at once and shows as text (4 MB: 15 s). */
const WORKER_STACK_MB = 1

/** A render thread idle this long leaves, giving back the heap V8 keeps while it lives (80 MB after 31 previews). */
const RENDER_THREAD_IDLE_MS = 5 * 60_000

/** Render threads at most: one runaway body holds one, and the others' renders go on in the other. */
const RENDER_THREADS = 2

/** Renders Markdown in worker threads, each body within the time limit. */
export class BoundedRenderer extends WorkerPool<MarkdownJob, string | BlockEditReply> {
  /** @param opts milliseconds a job may run before its thread is ended, and a thread may stay idle before it leaves */
  constructor (opts: { timeLimitMs?: number, idleMs?: number } = {}) {
    const timeLimitMs = opts.timeLimitMs ?? RENDER_TIME_LIMIT_MS
    super({
      file: new URL('./render-worker-thread', import.meta.url),
      size: RENDER_THREADS,
      timeLimitMs,
      idleMs: opts.idleMs ?? RENDER_THREAD_IDLE_MS,
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, stackSizeMb: WORKER_STACK_MB },
      failure: (why, detail) => why === 'timeout'
        ? new RenderRefusedError(`Rendering took longer than ${timeLimitMs} ms`, { limit: timeLimitMs })
        : why === 'closing' ? new RenderRefusedError('The service is closing') : new RenderRefusedError(`The body is too large to render (${detail})`)
    })
  }

  /**
   * Renders a body as renderMarkdown does, in a worker thread.
   * @param body the Markdown
   * @param opts the entry and field
   * @returns the HTML; rejects with RenderRefusedError (422) when the body is too long, slow or large
   */
  async render (body: string, opts: RenderMarkdownOptions): Promise<string> {
    return await this.#run(body, { body, opts: { ...opts } }, 'rendered') as string
  }

  /**
   * The outline of a body for block editing, parsed in a worker thread (1 MB: about a second). It
   * travels as JSON: 0.3 ms for a 20 KB body's outline, where V8's structured clone took 0.75 ms.
   * @param body the Markdown
   * @param mdx parse it as MDX
   * @returns its outline; rejects with RenderRefusedError (422) as render does
   */
  async outline (body: string, mdx: boolean): Promise<BodyOutline> {
    return JSON.parse(await this.#run(body, { outline: { body, mdx } }, 'parsed') as string) as BodyOutline
  }

  /**
   * An md_block or md_edit edit of a body, in a worker thread (~5 ms of CPU per KB; an md_edit's check may parse the whole body, seconds at 1 MB).
   * @param job the body, the block's hint, and the edited HTML or the DOM text before and after with marks and the kept outline
   * @returns the edit or why it was refused; rejects with RenderRefusedError (422) as render does
   */
  async edit<J extends EditJob> (job: J): Promise<BlockEditReply<J extends { textEdit: TextEditInput } ? TextEditResult : BlockEditResult>> {
    return await this.#run('blockEdit' in job ? job.blockEdit.body : job.textEdit.body, job, 'parsed') as BlockEditReply<never>
  }

  /** Runs one job on `body` in a thread; a body over the limit, or any failure, is a RenderRefusedError. */
  async #run (body: string, job: MarkdownJob, done: 'rendered' | 'parsed'): Promise<string | BlockEditReply> {
    if (body.length > RENDER_MAX_CHARS) {
      throw new RenderRefusedError(`The body is longer than ${RENDER_MAX_CHARS} characters and is not ${done}`, { limit: RENDER_MAX_CHARS, length: body.length })
    }
    return await this.run(job).catch((err: Error) => {
      throw err instanceof RenderRefusedError ? err : new RenderRefusedError(`The body cannot be ${done}: ${err.message}`)
    })
  }
}
