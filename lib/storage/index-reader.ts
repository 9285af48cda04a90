/**
 * Runs the index worker (`index-worker.ts`) over a collection's files and returns what it read.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { JsonSchema } from '../content/schema-tools.js'
import type { IndexRow, RowRules } from './index-row.js'
import { startWorker } from '../young-generation-cap.js'

/** What the worker reads. */
export interface IndexJob {
  repoRealDir: string
  /** `[id, absolute file]` of every entry file found. */
  files: Array<[string, string]>
  rules: RowRules
  /** The collection's schema (null: nothing to check). */
  schema: JsonSchema | null
}

/**
 * What the worker posts back: its rows as one JSON text (the snapshot's format: one string crosses
 * the thread boundary, and JSON.parse makes the objects in this heap), and apart the rows JSON
 * cannot carry exactly (a NaN or an Infinity in the data).
 */
export interface IndexReply {
  json: string
  odd: IndexRow[]
}

/** The worker module next to this one (`.js` when built, `.ts` under the tests' loader). */
const WORKER = new URL(`./index-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url)

/**
 * Reads and parses the files in a worker thread.
 * @param job the files and how to index them
 * @returns one row per file that exists (revision 0: the caller knows revisions); rejects when
 * the worker fails
 */
export async function readInWorker (job: IndexJob): Promise<IndexRow[]> {
  const worker = startWorker(WORKER, job)
  return await new Promise<IndexRow[]>((resolve, reject) => {
    worker.once('message', (reply: IndexReply) => {
      const rows = JSON.parse(reply.json) as IndexRow[]
      for (const row of reply.odd) rows.push(row)
      resolve(rows)
    })
    worker.once('error', reject)
    worker.once('exit', (code) => { reject(new Error(`index worker exited with code ${code}`)) })
  })
}
