/**
 * Markdown rendering off the service's event loop, with a time and memory limit. A body's render
 * time does not follow its size (a 3.5 KB table padded to 600 columns took 27 s, 102 KB of link
 * references 26 s), so no size limit alone keeps a render under the 100 ms the event loop may be
 * held: every render runs in a worker thread (two per instance, so one editor's runaway body does
 * not hold the others' renders), and a render over the time limit (or the thread's heap) ends its
 * thread and answers 422. The first thread starts on the first render, the second when both are wanted.
 */
import { getHeapStatistics } from 'node:v8'
import { RenderRefusedError } from '../errors.js'
import { WorkerPool, type JobFailure } from '../content/worker-pool.js'
import type { RenderMarkdownOptions } from '../content/markdown/render.js'
import type { BodyOutline } from '../content/markdown/body-outline.js'
import type { BlockEditJob, BlockEditReply, MarkdownJob } from './render-worker-messages.js'

/** Longest body (characters) rendered at all; a longer one is refused before any parse. */
export const RENDER_MAX_CHARS = 1_000_000
/** Default time one render may take (`CMS_RENDER_TIME_LIMIT_MS`). */
export const RENDER_TIME_LIMIT_MS = 10_000
/**
 * The worker's heap: the process's own limit (V8 sizes it to the machine's memory), at most 2,048 MB.
 * V8 grows a heap capped lower than that by only 1.3-2x after a full collection instead of 4x: capped
 * at 384 MB, the thread collected on almost every 20 KB render and used 1.4x the CPU of the same
 * render in the main thread. The time limit ends a runaway render (up to ~150 MB per second of CPU).
 */
const WORKER_HEAP_MB = Math.min(2048, Math.floor(getHeapStatistics().heap_size_limit / 2 ** 20))
/**
 * The worker's stack, as small as the main thread's (about 1 MB): HTML nested 5,000 deep then
 * overflows it at once and is shown as text, where the default 4 MB let it render for 15 s.
 */
const WORKER_STACK_MB = 1

/**
 * A render thread idle this long leaves (default of `idleMs`): after 31 previews of a 20 KB body it
 * holds 80 MB that V8 does not give back while it lives (RSS unchanged after 30 s idle; 80 MB less
 * once it ended). The next render starts a new thread, whose first renders take 3-5x a warm one's.
 */
export const RENDER_THREAD_IDLE_MS = 5 * 60_000

/** Settings of a BoundedRenderer. */
export interface BoundedRendererOptions {
  /** Milliseconds one render may run before its worker is ended (default RENDER_TIME_LIMIT_MS). */
  timeLimitMs?: number
  /** Milliseconds a thread may stay idle before it leaves (default RENDER_THREAD_IDLE_MS). */
  idleMs?: number
}

/** Render threads at most: one runaway body holds one, and the others' renders go on in the other. */
const RENDER_THREADS = 2

/** Renders Markdown in worker threads, each body within the time limit. */
export class BoundedRenderer {
  readonly timeLimitMs: number
  readonly #pool: WorkerPool<MarkdownJob, string | BodyOutline | BlockEditReply>

  constructor (opts: BoundedRendererOptions = {}) {
    this.timeLimitMs = opts.timeLimitMs ?? RENDER_TIME_LIMIT_MS
    // Under the test runner the module is TypeScript (its loader reaches the worker through execArgv).
    const file = import.meta.url.endsWith('.ts') ? './render-worker-thread.ts' : './render-worker-thread.js'
    this.#pool = new WorkerPool({
      file: new URL(file, import.meta.url),
      size: RENDER_THREADS,
      timeLimitMs: this.timeLimitMs,
      idleMs: opts.idleMs ?? RENDER_THREAD_IDLE_MS,
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, stackSizeMb: WORKER_STACK_MB },
      failure: (why: JobFailure, detail: string) => why === 'timeout'
        ? new RenderRefusedError(`Rendering took longer than ${this.timeLimitMs} ms`, { limit: this.timeLimitMs })
        : why === 'closing' ? new RenderRefusedError('The service is closing') : new RenderRefusedError(`The body is too large to render (${detail})`)
    })
  }

  /**
   * Renders a body as renderMarkdown does, in a worker thread.
   * @param body the Markdown
   * @param opts the entry and field
   * @returns the HTML; rejects with RenderRefusedError (422) when the body is too long, its render
   *   too slow or too large
   */
  async render (body: string, opts: RenderMarkdownOptions): Promise<string> {
    return await this.#run(body, { body, opts: { ...opts } }, 'rendered') as string
  }

  /**
   * The outline of a body for block editing (`GET /blocks`, md_edit), parsed in a worker thread: a
   * 1 MB body takes about a second (markdown-it-outline.ts), past what the event loop may be held.
   * @param body the Markdown
   * @param mdx parse it as MDX
   * @returns its outline; rejects with RenderRefusedError (422) as render does
   */
  async outline (body: string, mdx: boolean): Promise<BodyOutline> {
    return await this.#run(body, { outline: { body, mdx } }, 'parsed') as BodyOutline
  }

  /**
   * An md_block edit of a body (applyBlockEdit), in a worker thread: it parses the whole body, which
   * takes ~5 ms of CPU per KB (micromark), past what the event loop may be held.
   * @param job the body, the block's hint, the edited HTML and whether the body is MDX
   * @returns the edit or why it was refused; rejects with RenderRefusedError (422) as render does
   */
  async blockEdit (job: BlockEditJob['blockEdit']): Promise<BlockEditReply> {
    return await this.#run(job.body, { blockEdit: job }, 'parsed') as BlockEditReply
  }

  /** Runs one job on `body` in a thread; a body over the limit, or any failure, is a RenderRefusedError. */
  async #run (body: string, job: MarkdownJob, done: 'rendered' | 'parsed'): Promise<string | BodyOutline | BlockEditReply> {
    if (body.length > RENDER_MAX_CHARS) {
      throw new RenderRefusedError(`The body is longer than ${RENDER_MAX_CHARS} characters and is not ${done}`, { limit: RENDER_MAX_CHARS, length: body.length })
    }
    try {
      return await this.#pool.run(job)
    } catch (err) {
      throw err instanceof RenderRefusedError ? err : new RenderRefusedError(`The body cannot be ${done}: ${(err as Error).message}`)
    }
  }

  /**
   * Ends the worker threads; renders in progress or waiting are refused.
   * @returns resolves when the threads have exited
   */
  async close (): Promise<void> {
    await this.#pool.close()
  }
}
