/**
 * Runs the index worker (`index-worker.ts`) over a collection's files and returns what it read.
 */
import { Worker } from 'node:worker_threads'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { JsonSchema } from '../content/schema-tools.js'
import type { RowContent, RowRules } from './index-row.js'

/** What the worker reads. */
export interface IndexJob {
  repoRealDir: string
  /** `[id, absolute file]` of every entry file found. */
  files: Array<[string, string]>
  rules: RowRules
  /** The collection's schema (null: nothing to check). */
  schema: JsonSchema | null
}

/** One file as the worker read it (missing files are left out). */
export type ReadEntry =
  | { id: string, file: string, sig: string, content: RowContent }
  | { id: string, file: string, sig: string, message: string }

/** The worker module next to this one (`.js` when built, `.ts` under the tests' loader). */
const WORKER = new URL(`./index-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url)

/**
 * Reads and parses the files in a worker thread.
 * @param job the files and how to index them
 * @returns one result per file that exists; rejects when the worker fails
 */
export async function readInWorker (job: IndexJob): Promise<ReadEntry[]> {
  const worker = new Worker(WORKER, { workerData: job })
  return await new Promise<ReadEntry[]>((resolve, reject) => {
    worker.once('message', (entries: ReadEntry[]) => { resolve(entries) })
    worker.once('error', reject)
    worker.once('exit', (code) => { reject(new Error(`index worker exited with code ${code}`)) })
  })
}
