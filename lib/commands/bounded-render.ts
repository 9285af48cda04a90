/**
 * Markdown rendering off the service's event loop, with a time and memory limit. A body's render
 * time does not follow its size (a 3.5 KB table padded to 600 columns took 27 s, 102 KB of link
 * references 26 s), so no size limit alone keeps a render under the 100 ms the event loop may be
 * held: every render runs in one worker thread per instance, and a render over the time limit (or
 * the worker's heap) ends the worker and answers 422. The worker starts on the first render.
 */
import { Worker } from 'node:worker_threads'
import { RenderRefusedError } from '../errors.js'
import type { RenderMarkdownOptions } from '../content/markdown/render.js'
import type { RenderJob, RenderReply } from './render-worker-messages.js'

/** Longest body (characters) rendered at all; a longer one is refused before any parse. */
export const RENDER_MAX_CHARS = 1_000_000
/** Default time one render may take (`CMS_RENDER_TIME_LIMIT_MS`). */
export const RENDER_TIME_LIMIT_MS = 10_000
/** The worker's heap: a 1,000,000-character body renders in about 100 MB. */
const WORKER_HEAP_MB = 384
/**
 * The worker's stack, as small as the main thread's (about 1 MB): HTML nested 5,000 deep then
 * overflows it at once and is shown as text, where the default 4 MB let it render for 15 s.
 */
const WORKER_STACK_MB = 1

/** Settings of a BoundedRenderer. */
export interface BoundedRendererOptions {
  /** Milliseconds one render may run before its worker is ended (default RENDER_TIME_LIMIT_MS). */
  timeLimitMs?: number
}

interface Pending {
  job: RenderJob
  resolve: (html: string) => void
  reject: (err: Error) => void
}

/** Renders Markdown in a worker thread, one body at a time, each within the time limit. */
export class BoundedRenderer {
  readonly timeLimitMs: number
  #worker: Worker | null = null
  #ready = false
  #queue: Pending[] = []
  #running: Pending | null = null
  #timer: NodeJS.Timeout | null = null
  #nextId = 1
  #closed = false

  constructor (opts: BoundedRendererOptions = {}) {
    this.timeLimitMs = opts.timeLimitMs ?? RENDER_TIME_LIMIT_MS
  }

  /**
   * Renders a body as renderMarkdown does, in the worker.
   * @param body the Markdown
   * @param opts the entry and field
   * @returns the HTML; rejects with RenderRefusedError (422) when the body is too long, its render
   *   too slow or too large
   */
  async render (body: string, opts: RenderMarkdownOptions): Promise<string> {
    if (body.length > RENDER_MAX_CHARS) {
      throw new RenderRefusedError(`The body is longer than ${RENDER_MAX_CHARS} characters and is not rendered`, { limit: RENDER_MAX_CHARS, length: body.length })
    }
    if (this.#closed) throw new RenderRefusedError('The service is closing')
    return await new Promise<string>((resolve, reject) => {
      this.#queue.push({ job: { id: this.#nextId++, body, opts: { ...opts } }, resolve, reject })
      this.#startNext()
    })
  }

  /**
   * Ends the worker; a render in progress or waiting is refused.
   * @returns resolves when the worker has exited
   */
  async close (): Promise<void> {
    this.#closed = true
    const refused = new RenderRefusedError('The service is closing')
    for (const pending of this.#queue.splice(0)) pending.reject(refused)
    await this.#endWorker(refused)
  }

  #startNext (): void {
    if (this.#running !== null) return
    const next = this.#queue.shift()
    if (next === undefined) return
    this.#running = next
    const worker = this.#worker ?? this.#startWorker()
    worker.postMessage(next.job)
    if (this.#ready) this.#startTimer()
  }

  #startTimer (): void {
    this.#timer = setTimeout(() => {
      void this.#endWorker(new RenderRefusedError(`Rendering took longer than ${this.timeLimitMs} ms`, { limit: this.timeLimitMs }))
    }, this.timeLimitMs)
  }

  #startWorker (): Worker {
    // Under the test runner the module is TypeScript (its loader reaches the worker through execArgv).
    const file = import.meta.url.endsWith('.ts') ? './render-worker-thread.ts' : './render-worker-thread.js'
    const worker = new Worker(new URL(file, import.meta.url), { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, stackSizeMb: WORKER_STACK_MB } })
    worker.unref()
    worker.on('message', (reply: RenderReply) => {
      if (worker !== this.#worker) return
      if ('ready' in reply) {
        this.#ready = true
        if (this.#running !== null) this.#startTimer()
        return
      }
      const running = this.#running
      if (running === null || running.job.id !== reply.id) return
      this.#finish()
      if ('html' in reply) running.resolve(reply.html)
      else running.reject(new RenderRefusedError(`The body cannot be rendered: ${reply.error}`))
      this.#startNext()
    })
    // An error (the heap limit included) ends the worker: the next render starts a new one.
    worker.on('error', (err) => { void this.#endWorker(new RenderRefusedError(`The body is too large to render (${err.message})`), worker) })
    worker.on('exit', () => { void this.#endWorker(new RenderRefusedError('The renderer stopped'), worker) })
    this.#worker = worker
    this.#ready = false
    return worker
  }

  /** Ends the worker (if it is still `which`) and refuses the render in progress with `reason`. */
  async #endWorker (reason: Error, which: Worker | null = this.#worker): Promise<void> {
    if (which === null || which !== this.#worker) return
    this.#worker = null
    const running = this.#running
    this.#finish()
    running?.reject(reason)
    const exited = which.terminate()
    if (!this.#closed) this.#startNext()
    await exited
  }

  #finish (): void {
    if (this.#timer !== null) clearTimeout(this.#timer)
    this.#timer = null
    this.#running = null
  }
}
