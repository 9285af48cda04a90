/**
 * Runs the stat worker (`stat-worker.ts`) over a list of entry files.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Worker } from 'node:worker_threads'
import { startWorker } from '../young-generation-cap.js'

/** The worker module next to this one (`.js` when built, `.ts` under the tests' loader). */
const WORKER = new URL(`./stat-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url)

/** Per file: its signature, null when it is missing or not a file, undefined when the caller must stat it itself. */
export type StatResults = Array<string | null | undefined>

/** A stat worker's first pass, and the second it can make of the same files. */
export interface StatPass {
  /** The first pass; rejects when the worker fails. */
  sigs: Promise<StatResults>
  /** The first pass's results so far, in the files' order (filled as the worker posts them). */
  results: StatResults
  /**
   * Waits for the first pass's results up to a position.
   * @param count how many files' results are needed
   * @returns true once `results` holds at least `count` (or every) result; false when the worker failed first
   */
  ready: (count: number) => Promise<boolean>
  /**
   * Stats the files again and ends the worker.
   * @returns the positions of the files whose result differs from the first pass's (or is undefined)
   */
  again: () => Promise<number[]>
  /** Ends the worker without a second pass. */
  end: () => void
}

/**
 * Starts a stat worker over files: it stats them at once and can stat them again later.
 * @param files absolute entry file paths (no NUL in a path)
 * @returns the pass; the worker never keeps the process alive
 */
export function startStatPass (files: readonly string[]): StatPass {
  // Through startWorker, so the worker's heap set-up does not turn the young generation's growth back on.
  const worker = startWorker(WORKER, { files: files.join('\0') })
  return passOf(worker, failureOf(worker), files)
}

/** A stat worker started before its files are known: its start overlaps the folder scan. */
export interface WaitingStatWorker {
  /**
   * Gives the worker its files (once).
   * @param files absolute entry file paths (no NUL in a path)
   * @returns the pass, as from `startStatPass`
   */
  pass: (files: readonly string[]) => StatPass
  /** Ends the worker without a pass (once, instead of `pass`). */
  end: () => void
}

/**
 * Starts a stat worker that waits for its files (a thread's start, ~0.1-0.2 s of its own CPU,
 * then runs beside the work that finds them).
 * @returns the waiting worker; it never keeps the process alive before `pass`
 */
export function startWaitingStatWorker (): WaitingStatWorker {
  const worker = startWorker(WORKER, {})
  const failed = failureOf(worker)
  worker.unref()
  let given = false
  return {
    pass: (files) => {
      if (given) throw new Error('stat worker already given its files')
      given = true
      worker.ref()
      worker.postMessage(files.join('\0'))
      return passOf(worker, failed, files)
    },
    end: () => {
      if (given) return
      given = true
      worker.postMessage(false)
    }
  }
}

/** Rejects when the worker fails or exits (attached at once: an early error is never unhandled). */
function failureOf (worker: Worker): Promise<never> {
  const failed = new Promise<never>((resolve, reject) => {
    worker.once('error', reject)
    worker.once('exit', (code) => { reject(new Error(`stat worker exited with code ${code}`)) })
  })
  failed.catch(() => {})
  return failed
}

/** The pass of a worker stat-ing `files` (its first pass coming in chunks). */
function passOf (worker: Worker, failed: Promise<never>, files: readonly string[]): StatPass {
  const next = async <T>(): Promise<T> => await Promise.race([new Promise<T>(resolve => worker.once('message', resolve)), failed])
  // The first pass comes in chunks (stat-worker.ts), in order, until every file has its result.
  const results: StatResults = []
  let waiters: Array<{ count: number, resolve: (ok: boolean) => void }> = []
  let broken = false
  const sigs = new Promise<StatResults>((resolve, reject) => {
    const onChunk = (chunk: StatResults): void => {
      for (const sig of chunk) results.push(sig)
      const complete = results.length >= files.length
      if (complete) worker.off('message', onChunk)
      waiters = waiters.filter(w => { if (complete || w.count <= results.length) { w.resolve(true); return false } return true })
      if (complete) resolve(results)
    }
    worker.on('message', onChunk)
    failed.catch((err: unknown) => {
      worker.off('message', onChunk)
      broken = true
      for (const w of waiters) w.resolve(false)
      waiters = []
      reject(err)
    })
  })
  sigs.catch(() => {})
  // Waiting for `again` or `end` must not hold the process open.
  sigs.then(() => { worker.unref() }, () => {})
  let ended = false
  return {
    sigs,
    results,
    ready: async (count: number) => {
      if (results.length >= Math.min(count, files.length)) return true
      if (broken) return false
      return await new Promise<boolean>(resolve => { waiters.push({ count, resolve }) })
    },
    again: async () => {
      await sigs
      if (ended) throw new Error('stat worker already ended')
      ended = true
      const changed = next<number[]>()
      worker.postMessage(true)
      return await changed
    },
    end: () => {
      if (ended) return
      ended = true
      void sigs.then(() => { worker.postMessage(false) }, () => {})
    }
  }
}

/**
 * The signature of each file, stat-ed in a worker thread.
 * @param files absolute entry file paths
 * @returns per file: its signature, null when it is missing or not a file, undefined when the
 * caller must stat it itself (a link, an unexpected error); rejects when the worker fails
 */
export async function statInWorker (files: readonly string[]): Promise<StatResults> {
  const pass = startStatPass(files)
  try {
    return await pass.sigs
  } finally {
    pass.end()
  }
}
