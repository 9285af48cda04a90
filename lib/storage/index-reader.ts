/**
 * Runs the index worker (`index-worker.ts`) over a collection's files and returns what it read.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { JsonSchema } from '../content/schema-tools.js'
import type { IndexRow, RowRules } from './index-row.js'
import type { EntryLayout } from './entry-paths.js'
import { RowTable } from './row-table.js'

/** What the worker reads. */
export interface IndexJob {
  repoRealDir: string
  /** `[id, absolute file]` of every entry file found. */
  files: Array<[string, string]>
  rules: RowRules
  /** The collection's schema (null: nothing to check). */
  schema: JsonSchema | null
  /** The collection's layout: a record leaves out a file that is its id's default one (absent: keeps every file). */
  layout?: EntryLayout
}

/**
 * What the worker posts back: its rows as a row table (`row-table.ts`, the snapshot's layout: one
 * buffer crosses the thread boundary, transferred, and the rows' content is parsed in this thread
 * only when used), and apart, as they are, the rows a record cannot carry (a read error, a NaN or
 * an Infinity in the data).
 */
export interface IndexReply {
  table: Uint8Array
  odd: IndexRow[]
}

/** The format and key of the tables the worker posts (never written to disk). */
export const WORKER_TABLE_FORMAT = 1
export const WORKER_TABLE_KEY = 'index-worker'

/** The worker module next to this one (`.js` when built, `.ts` under the tests' loader). */
const WORKER = new URL(`./index-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url)

/**
 * Reads and parses the files in a worker thread.
 * @param job the files and how to index them
 * @returns the rows of the files that exist (revision 0: the caller knows revisions), as a table
 * and the rows it cannot carry; rejects when the worker fails
 */
export async function readTableInWorker (job: IndexJob): Promise<{ table: RowTable, odd: IndexRow[] }> {
  const worker = new Worker(WORKER, { workerData: job })
  return await new Promise((resolve, reject) => {
    worker.once('message', (reply: IndexReply) => {
      const bytes = reply.table
      const table = RowTable.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), WORKER_TABLE_FORMAT, WORKER_TABLE_KEY, job.rules.titleField)
      if (table === null) reject(new Error('index worker: malformed rows'))
      else resolve({ table, odd: reply.odd })
    })
    worker.once('error', reject)
    worker.once('exit', (code) => { reject(new Error(`index worker exited with code ${code}`)) })
  })
}

/**
 * Reads and parses the files in a worker thread, as plain rows.
 * @param job the files and how to index them (without a layout: every row gets its file)
 * @returns one row per file that exists (revision 0: the caller knows revisions); rejects when
 * the worker fails
 */
export async function readInWorker (job: IndexJob): Promise<IndexRow[]> {
  const { table, odd } = await readTableInWorker({ ...job, layout: undefined })
  const rows: IndexRow[] = []
  for (let at = 0; at < table.size; at++) {
    const id = table.id(at)
    rows.push({ id, file: table.file(at) as string, sig: table.sig(at), revision: 0, ...table.content(at, id) })
  }
  for (const row of odd) rows.push(row)
  return rows
}
