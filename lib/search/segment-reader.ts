/**
 * Runs the search worker (`search-worker.ts`) over a collection's files, or builds in this thread
 * when the collection is small; or runs the same module as a child process that writes the
 * segment's file (`writeSegmentFile`).
 */
import { fork } from 'node:child_process'
import { setPriority } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { buildSegment, type BuiltSegment, type SegmentJob } from './build-segment.js'
import type { SnapshotPlace } from './search-snapshot.js'
import type { SegmentProcessAnswer, SegmentProcessMessage } from './segment-process.js'

/** The worker module next to this one (`.js` when built, `.ts` under the tests' loader). */
const WORKER = new URL(`./search-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url)

/**
 * Collections with fewer files are indexed in this thread: a worker's start costs more than
 * reading them (the same threshold and measurement as the collection index's, collection-index.ts).
 */
export const INLINE_MAX_FILES = 200

/**
 * Builds a segment in a worker thread (in this thread for a small collection, or when no worker
 * can start).
 * @param job the files and how to read them
 * @returns the segment
 */
export async function readSegment (job: SegmentJob): Promise<BuiltSegment> {
  if (job.files.length < INLINE_MAX_FILES) return await buildSegment(job)
  // One worker at a time: many big collections warming together would each start one.
  const turn = queue.then(async () => await inWorker(job)).catch(async () => await buildSegment(job))
  queue = turn.then(() => {}, () => {})
  return await turn
}

let queue: Promise<void> = Promise.resolve()

async function inWorker (job: SegmentJob): Promise<BuiltSegment> {
  const worker = new Worker(WORKER, { workerData: job })
  return await new Promise<BuiltSegment>((resolve, reject) => {
    worker.once('message', (built: BuiltSegment) => { resolve(built) })
    worker.once('error', reject)
    worker.once('exit', (code) => { reject(new Error(`search worker exited with code ${code}`)) })
  })
}

/** Node's debugger options (`--inspect`, `--inspect-brk=9229`, `--inspect-port` ...), left out of the search process's. */
const INSPECT_FLAG = /^--(inspect|debug)(-[a-z-]+)?(=.*)?$/

/** Entries sent to the search process per message (a few hundred kilobytes of JSON). */
const ROWS_PER_MESSAGE = 4096

/**
 * The search process's nice value: the lowest priority, so that saves, lists and searches (this
 * process) take the CPU first; the build uses what they leave (issue 18: at 100,000 entries a
 * full build is ~12 s of CPU, on a 2-core machine beside a sustained load of saves).
 */
export const SEARCH_PROCESS_NICE = 19

/** A segment to build into its file by the search process. */
export interface SegmentFileJob {
  repoRealDir: string
  format: SegmentJob['format']
  titleField: string | null
  /** The entries (id and absolute file). */
  rows: ReadonlyArray<{ readonly id: string, readonly file: string }>
  /** The signature to record for each of `rows` ('' when not to be trusted). */
  sigs: readonly string[]
  /** The file to write. */
  place: SnapshotPlace
  /** The token the file's header gets (`SearchSnapshot.read(build)` takes only that file). */
  build: string
  /** Take what is still valid from the segment file now at `place` (see `SegmentProcessStart.reuse`). */
  reuse?: boolean
}

/**
 * Builds a segment in a child process (the search worker's module run as a process), which writes
 * it to its file atomically and exits: the memory reading and tokenizing every file took goes back
 * to the system with the process (a worker thread's stays in this process's malloc arenas). One
 * build at a time, as for the worker.
 * @param job the entries, and where to write
 * @param signal aborting it kills the process (SIGKILL); the promise settles once it has exited
 * @returns once the file is written and the process has exited: how many documents it took from the
 *   previous file (`reuse`); rejects when the process could not start, failed, died or was killed (a
 *   file it may have left is not its build's: read it back with the build's token)
 */
export async function writeSegmentFile (job: SegmentFileJob, signal: AbortSignal): Promise<{ reused: number }> {
  const turn = queue.then(async () => { signal.throwIfAborted(); return await inProcess(job, signal) })
  queue = turn.then(() => {}, () => {})
  return await turn
}

async function inProcess (job: SegmentFileJob, signal: AbortSignal): Promise<{ reused: number }> {
  // Without the debugger flags of this process (a child under --inspect-brk would wait for one forever).
  const execArgv = process.execArgv.filter(arg => !INSPECT_FLAG.test(arg))
  const env = { ...process.env }
  if (env.NODE_OPTIONS !== undefined) env.NODE_OPTIONS = env.NODE_OPTIONS.split(/\s+/).filter(arg => !INSPECT_FLAG.test(arg)).join(' ')
  const child = fork(fileURLToPath(WORKER), [], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'], signal, killSignal: 'SIGKILL', execArgv, env })
  // Not fatal: a system that refuses leaves the build at this process's priority.
  if (child.pid !== undefined) try { setPriority(child.pid, SEARCH_PROCESS_NICE) } catch {}
  const exited = new Promise<{ reused: number }>((resolve, reject) => {
    let done = false
    let reused = 0
    let failure: string | null = null
    child.on('message', (m: SegmentProcessAnswer) => {
      if (m?.kind === 'done') { done = true; reused = typeof m.reused === 'number' ? m.reused : 0 }
      else if (m?.kind === 'failed') failure = m.message
    })
    // An error after the start (a kill, a send) is followed by 'exit'; one before it is the only event.
    child.on('error', err => { if (child.pid === undefined) reject(err) })
    child.once('exit', (code, sig) => {
      if (done && code === 0) resolve({ reused })
      else reject(new Error(failure ?? `search process exited with ${sig ?? String(code)}`))
    })
  })
  const send = async (message: SegmentProcessMessage): Promise<void> => {
    await new Promise<void>((resolve, reject) => { child.send(message, err => { if (err !== null) reject(err); else resolve() }) })
  }
  try {
    await send({ kind: 'start', repoRealDir: job.repoRealDir, format: job.format, titleField: job.titleField, place: job.place, build: job.build, reuse: job.reuse === true })
    for (let at = 0; at < job.rows.length; at += ROWS_PER_MESSAGE) {
      const rows = job.rows.slice(at, at + ROWS_PER_MESSAGE)
      await send({ kind: 'rows', ids: rows.map(r => r.id), files: rows.map(r => r.file), sigs: job.sigs.slice(at, at + ROWS_PER_MESSAGE) })
    }
    await send({ kind: 'end' })
  } catch {
    // The process died or was killed: `exited` says how.
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
  return await exited
}
