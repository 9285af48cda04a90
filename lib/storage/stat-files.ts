/**
 * Runs the stat worker (`stat-worker.ts`) over a list of entry files.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startWorker } from '../young-generation-cap.js'

/** The worker module next to this one (`.js` when built, `.ts` under the tests' loader). */
const WORKER = new URL(`./stat-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url)

/**
 * The signature of each file, stat-ed in a worker thread.
 * @param files absolute entry file paths
 * @returns per file: its signature, null when it is missing or not a file, undefined when the
 * caller must stat it itself (a link, an unexpected error); rejects when the worker fails
 */
export async function statInWorker (files: readonly string[]): Promise<Array<string | null | undefined>> {
  const worker = startWorker(WORKER, { files })
  return await new Promise((resolve, reject) => {
    worker.once('message', (sigs: Array<string | null | undefined>) => { resolve(sigs) })
    worker.once('error', reject)
    worker.once('exit', (code) => { reject(new Error(`stat worker exited with code ${code}`)) })
  })
}
