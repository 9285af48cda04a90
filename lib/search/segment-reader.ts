/**
 * Runs the search worker (`search-worker.ts`) over a collection's files, or builds in this thread
 * when the collection is small.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildSegment, type BuiltSegment, type SegmentJob } from './build-segment.js'
import { startWorker } from '../young-generation-cap.js'

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
  const worker = startWorker(WORKER, job)
  return await new Promise<BuiltSegment>((resolve, reject) => {
    worker.once('message', (built: BuiltSegment) => { resolve(built) })
    worker.once('error', reject)
    worker.once('exit', (code) => { reject(new Error(`search worker exited with code ${code}`)) })
  })
}
