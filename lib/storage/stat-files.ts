/**
 * Runs the stat worker (`stat-worker.ts`) over a list of entry files.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { SIG_UNKNOWN, sigFlag, STAT_CHUNK, statOne, type StatResult } from './stat-one.js'

/** The worker module next to this one (`.js` when built, `.ts` under the tests' loader). */
const WORKER = new URL(`./stat-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url)

/**
 * Files for a stat pass without a string per file in this thread: a snapshot's records copied
 * whole into shared memory (`RowTable.sharedRecords`), each naming its file or, when it is the
 * id's default one, `<prefix><id><suffix>` (`record-file.ts`); the worker makes the paths (issue
 * 18, eighth pass: building 100,000 paths and joining them here held the worker's start back).
 */
export interface PackedFiles {
  count: number
  records: SharedArrayBuffer
  prefix: string
  suffix: string
  /** When the pass began, before any of its stats (`sigFlag`). */
  statAt: number
  /** The i-th file, in this thread (its share of the pass). */
  at: (i: number) => string
  /** Whether the i-th record's signature is this one, in this thread. */
  same: (i: number, sig: string) => boolean
}

/** What the worker gets: the NUL-joined files, or packed records. */
type WorkerFiles = { files: string } | { records: SharedArrayBuffer, prefix: string, suffix: string, statAt: number }

function workerFiles (files: readonly string[] | PackedFiles): WorkerFiles {
  if (Array.isArray(files)) return { files: files.join('\0') }
  const { records, prefix, suffix, statAt } = files as PackedFiles
  return { records, prefix, suffix, statAt }
}

function countOf (files: readonly string[] | PackedFiles): number {
  return Array.isArray(files) ? files.length : (files as PackedFiles).count
}

function fileAtOf (files: readonly string[] | PackedFiles): (i: number) => string {
  return Array.isArray(files) ? i => (files as readonly string[])[i]! : (files as PackedFiles).at
}

/** Per file: its signature, null when it is missing or not a file, undefined when the caller must stat it itself. */
export type StatResults = StatResult[]

/** A stat worker's first pass, and the second it can make of the same files. */
export interface StatPass {
  /** The first pass; rejects when the worker fails. */
  sigs: Promise<StatResults>
  /**
   * The first pass's results so far, by the files' positions (filled as the chunks are stat-ed; a
   * hole is not stat-ed yet); a packed pass fills `flags` instead.
   */
  results: StatResults
  /** A packed pass's results (`sigFlag`, by position), else null. */
  flags: Uint8Array | null
  /**
   * Waits for the first pass's results up to a position; meanwhile this thread stats chunks of the
   * list itself, from its end (each chunk is claimed by one thread: on 2 cores the pass takes about
   * half the time when this thread would otherwise wait, issue 18).
   * @param count how many files' results are needed
   * @returns true once `results` holds at least `count` (or every) result; false when the worker failed first
   */
  ready: (count: number) => Promise<boolean>
  /**
   * Stats chunks of the list here (from its end, as `ready` does) while `busy` holds, a turn of
   * the event loop between chunks: this thread's share of the pass while it waits for other work
   * (the folder scan's `readdir`, in the thread pool).
   * @param busy checked before each chunk
   * @returns resolves once `busy` is false or no chunk is left to claim
   */
  helpWhile: (busy: () => boolean) => Promise<void>
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
export function startStatPass (files: readonly string[] | PackedFiles): StatPass {
  const claims = new SharedArrayBuffer(4 * Math.ceil(countOf(files) / STAT_CHUNK))
  const worker = new Worker(WORKER, { workerData: { ...workerFiles(files), claims } })
  return passOf(worker, failureOf(worker), files, new Int32Array(claims))
}

/** A stat worker started before its files are known: its start overlaps the folder scan. */
export interface WaitingStatWorker {
  /**
   * Gives the worker its files (once).
   * @param files absolute entry file paths (no NUL in a path), or packed
   * @returns the pass, as from `startStatPass`
   */
  pass: (files: readonly string[] | PackedFiles) => StatPass
  /** Ends the worker without a pass (once, instead of `pass`). */
  end: () => void
}

/**
 * Starts a stat worker that waits for its files (a thread's start, ~0.1-0.2 s of its own CPU,
 * then runs beside the work that finds them).
 * @returns the waiting worker; it never keeps the process alive before `pass`
 */
export function startWaitingStatWorker (): WaitingStatWorker {
  const worker = new Worker(WORKER, { workerData: {} })
  const failed = failureOf(worker)
  worker.unref()
  let given = false
  return {
    pass: (files) => {
      if (given) throw new Error('stat worker already given its files')
      given = true
      worker.ref()
      const claims = new SharedArrayBuffer(4 * Math.ceil(countOf(files) / STAT_CHUNK))
      worker.postMessage({ ...workerFiles(files), claims })
      return passOf(worker, failed, files, new Int32Array(claims))
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

/** The pass of a worker stat-ing `files` (its first pass coming in chunks), shared with this thread through `claims`. */
function passOf (worker: Worker, failed: Promise<never>, list: readonly string[] | PackedFiles, claims: Int32Array): StatPass {
  const count = countOf(list)
  const fileAt = fileAtOf(list)
  const next = async <T>(): Promise<T> => await Promise.race([new Promise<T>(resolve => worker.once('message', resolve)), failed])
  const chunks = claims.length
  const packed = Array.isArray(list) ? null : list as PackedFiles
  const results: StatResults = packed === null ? new Array<StatResult>(count) : []
  // A hole (not stat-ed yet) reads as SIG_UNKNOWN, as a hole in `results` reads as undefined.
  const flags = packed === null ? null : new Uint8Array(count).fill(SIG_UNKNOWN)
  const done = new Uint8Array(chunks)
  // The chunks this thread stat-ed (told to the worker for its second pass).
  const mine: Array<[number, StatResult[]]> = []
  let doneCount = 0
  /** Every chunk before this one is done. */
  let prefix = 0
  /** The last chunk this thread may still claim (it claims from the end). */
  let stealFrom = chunks - 1
  let waiters: Array<{ count: number, resolve: (ok: boolean) => void }> = []
  let broken = false
  let settle: (sigs: StatResults) => void = () => {}
  const sigs = new Promise<StatResults>((resolve, reject) => {
    settle = resolve
    failed.catch((err: unknown) => {
      worker.off('message', onChunk)
      broken = true
      for (const w of waiters) w.resolve(false)
      waiters = []
      reject(err)
    })
  })
  const fill = (k: number, chunk: StatResults | Uint8Array): void => {
    if (done[k] === 1) return
    if (flags !== null) flags.set(chunk as Uint8Array, k * STAT_CHUNK)
    else for (let j = 0; j < chunk.length; j++) results[k * STAT_CHUNK + j] = (chunk as StatResults)[j]
    done[k] = 1
    doneCount++
    while (prefix < chunks && done[prefix] === 1) prefix++
    const upTo = prefix === chunks ? count : prefix * STAT_CHUNK
    const complete = doneCount === chunks
    if (complete) worker.off('message', onChunk)
    waiters = waiters.filter(w => { if (complete || w.count <= upTo) { w.resolve(true); return false } return true })
    if (complete) settle(results)
  }
  const onChunk = (msg: { k: number, sigs: StatResults | Uint8Array }): void => { fill(msg.k, msg.sigs) }
  worker.on('message', onChunk)
  if (chunks === 0) settle(results)
  sigs.catch(() => {})
  // Waiting for `again` or `end` must not hold the process open.
  sigs.then(() => { worker.unref() }, () => {})
  /** Claims the last unclaimed chunk and stats it here; false when none is left. */
  const statOneChunk = (): boolean => {
    while (stealFrom >= 0 && Atomics.compareExchange(claims, stealFrom, 0, 1) !== 0) stealFrom--
    if (stealFrom < 0) return false
    const k = stealFrom--
    const chunk: StatResults = []
    for (let i = k * STAT_CHUNK; i < Math.min(count, (k + 1) * STAT_CHUNK); i++) chunk.push(statOne(fileAt(i)))
    mine.push([k, chunk])
    if (packed !== null) {
      const chunkFlags = new Uint8Array(chunk.length)
      for (let j = 0; j < chunk.length; j++) {
        const sig = chunk[j]
        chunkFlags[j] = sigFlag(sig, typeof sig === 'string' && packed.same(k * STAT_CHUNK + j, sig), packed.statAt)
      }
      fill(k, chunkFlags)
    } else {
      fill(k, chunk)
    }
    return true
  }
  let ended = false
  return {
    sigs,
    results,
    flags,
    ready: async (upTo: number) => {
      const need = Math.min(upTo, count)
      for (;;) {
        if (prefix === chunks || prefix * STAT_CHUNK >= need) return true
        if (broken) return false
        // Rather than wait: a chunk from the end, then a turn for the worker's messages and requests.
        if (!statOneChunk()) break
        await new Promise(resolve => setImmediate(resolve))
      }
      if (prefix === chunks || prefix * STAT_CHUNK >= need) return true
      if (broken) return false
      return await new Promise<boolean>(resolve => { waiters.push({ count: need, resolve }) })
    },
    helpWhile: async (busy: () => boolean) => {
      while (busy() && !broken && statOneChunk()) await new Promise(resolve => setImmediate(resolve))
    },
    again: async () => {
      await sigs
      if (ended) throw new Error('stat worker already ended')
      ended = true
      const changed = next<number[]>()
      worker.postMessage({ again: true, filled: mine })
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
