/**
 * A pool of worker threads for work whose cost does not follow its input's size (Markdown, schemas): a job
 * over the time limit, the heap or the stack ends its thread, never the event loop. Threads serve with `serveJobs`.
 */
import { Worker, parentPort, type ResourceLimits } from 'node:worker_threads'

const MODULE_EXTENSION = import.meta.url.endsWith('.ts') ? '.ts' : '.js'

/** Why a job did not finish. */
export type JobFailure = 'timeout' | 'crashed' | 'closing'

/** Settings of a WorkerPool. */
export interface WorkerPoolOptions {
  /** The thread's module, without its extension (this module's: `.ts` under the test runner, else `.js`). */
  file: URL
  /** Threads at most (jobs beyond wait for a free one). */
  size: number
  /** Milliseconds one job may run before its thread is ended. */
  timeLimitMs: number
  /** Milliseconds a thread may stay idle before it leaves (default: it stays). */
  idleMs?: number
  resourceLimits?: ResourceLimits
  /** The error a job that did not finish rejects with. */
  failure: (why: JobFailure, detail: string) => Error
}

/** What the pool posts to the thread's module: a job, or `leave` (close the port and exit). */
type PoolRequest<J> = { job: J } | { leave: true }

/** What the thread's module posts: `ready` once loaded (a job's time starts then), then the answer to its one running job. */
type PoolReply<R> = { reply: R } | { error: string } | { ready: true }

interface Pending<J, R> {
  job: J
  resolve: (reply: R) => void
  reject: (err: Error) => void
}

interface Slot<J, R> {
  worker: Worker
  ready: boolean
  running: Pending<J, R> | null
  /** The running job's time limit, or the idle thread's time to leave. */
  timer: NodeJS.Timeout | null
}

/** Runs jobs in up to `size` worker threads, each job within the time limit. */
export class WorkerPool<J, R> {
  readonly #slots = new Set<Slot<J, R>>()
  readonly #queue: Array<Pending<J, R>> = []
  #closed = false

  constructor (private readonly opts: WorkerPoolOptions) {}

  /** Threads running now (for tests). */
  get threads (): number { return this.#slots.size }

  /**
   * Runs one job in a thread.
   * @param job what the thread's module receives
   * @returns its reply; rejects with the `failure` error when the job did not finish, or with an
   *   Error of the thread's message when the job threw
   */
  async run (job: J): Promise<R> {
    if (this.#closed) throw this.opts.failure('closing', 'the service is closing')
    return await new Promise<R>((resolve, reject) => {
      this.#queue.push({ job, resolve, reject })
      this.#dispatch()
    })
  }

  /**
   * Ends every thread; jobs running or waiting are refused.
   * @returns resolves when the threads have exited
   */
  async close (): Promise<void> {
    this.#closed = true
    for (const pending of this.#queue.splice(0)) pending.reject(this.opts.failure('closing', 'the service is closing'))
    await Promise.all([...this.#slots].map(async slot => { await this.#end(slot, 'closing', 'the service is closing') }))
  }

  #dispatch (): void {
    while (this.#queue.length > 0) {
      const slot = [...this.#slots].find(s => s.running === null) ?? (this.#slots.size < this.opts.size ? this.#start() : null)
      if (slot === null) return
      const next = this.#queue.shift()!
      this.#free(slot)
      slot.running = next
      slot.worker.postMessage({ job: next.job } satisfies PoolRequest<J>)
      if (slot.ready) this.#startTimer(slot)
    }
  }

  #startTimer (slot: Slot<J, R>): void {
    slot.timer = setTimeout(() => { void this.#end(slot, 'timeout', `took longer than ${this.opts.timeLimitMs} ms`) }, this.opts.timeLimitMs)
  }

  #start (): Slot<J, R> {
    const worker = new Worker(new URL(this.opts.file.href + MODULE_EXTENSION), { resourceLimits: this.opts.resourceLimits })
    worker.unref()
    const slot: Slot<J, R> = { worker, ready: false, running: null, timer: null }
    worker.on('message', (message: PoolReply<R>) => {
      if (!this.#slots.has(slot)) return
      if ('ready' in message) {
        slot.ready = true
        if (slot.running !== null) this.#startTimer(slot)
        return
      }
      const running = slot.running
      if (running === null) return
      this.#free(slot)
      if ('reply' in message) running.resolve(message.reply)
      else running.reject(new Error(message.error))
      this.#dispatch()
      if (slot.running === null && this.opts.idleMs !== undefined) {
        slot.timer = setTimeout(() => { void this.#end(slot, 'closing', 'the thread was idle') }, this.opts.idleMs)
        slot.timer.unref()
      }
    })
    // An error (the heap or stack limit included) ends the thread: the next job starts a new one.
    worker.on('error', (err) => { void this.#end(slot, 'crashed', err.message) })
    worker.on('exit', () => { void this.#end(slot, 'crashed', 'the thread stopped') })
    this.#slots.add(slot)
    return slot
  }

  /** Ends a thread (once) and refuses its running job. */
  async #end (slot: Slot<J, R>, why: JobFailure, detail: string): Promise<void> {
    if (!this.#slots.delete(slot)) return
    const running = slot.running
    this.#free(slot)
    running?.reject(this.opts.failure(why, detail))
    const exited = why === 'closing' && running === null ? this.#leave(slot.worker) : slot.worker.terminate()
    if (!this.#closed) this.#dispatch()
    await exited
  }

  /** Asks an idle thread to leave (it exits 0, as a thread that finished); ends it after a second. */
  async #leave (worker: Worker): Promise<void> {
    const exited = new Promise<void>(resolve => { worker.once('exit', () => { resolve() }) })
    worker.postMessage({ leave: true } satisfies PoolRequest<never>)
    const timer = setTimeout(() => { void worker.terminate() }, 1000)
    await exited
    clearTimeout(timer)
  }

  #free (slot: Slot<J, R>): void {
    if (slot.timer !== null) clearTimeout(slot.timer)
    slot.timer = null
    slot.running = null
  }
}

/**
 * The thread side of a WorkerPool, run by the thread's module: each job answered with what `handle`
 * returns (or the message of what it throws), `leave` honoured, and `ready` posted now.
 * @param handle what the thread does with one job
 */
export function serveJobs<J, R> (handle: (job: J) => R | Promise<R>): void {
  parentPort?.on('message', (request: PoolRequest<J>) => {
    if ('leave' in request) { parentPort?.close(); return }
    void Promise.resolve().then(() => handle(request.job)).then(
      (reply): PoolReply<R> => ({ reply }),
      (err: unknown): PoolReply<R> => ({ error: err instanceof Error ? err.message : String(err) })
    ).then(message => { parentPort?.postMessage(message) })
  })
  parentPort?.postMessage({ ready: true } satisfies PoolReply<R>)
}
