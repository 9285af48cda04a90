/**
 * The stat worker: lstats a list of entry files in its own thread and posts back each file's
 * signature, so a restart's stat of every file (100,000 system calls and Stats objects) runs
 * beside the snapshot parse in the service's thread instead of after it. Loads nothing but
 * `file-signature.ts`. A link (to be checked against the repository) or an error other than a
 * missing file is left to the caller (undefined).
 */
import { lstatSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import { signatureOf } from './file-signature.js'

const { files } = workerData as { files: string[] }
const sigs: Array<string | null | undefined> = []
for (const file of files) {
  try {
    const st = lstatSync(file, { throwIfNoEntry: false })
    sigs.push(st === undefined ? null : st.isSymbolicLink() ? undefined : st.isFile() ? signatureOf(st) : null)
  } catch {
    sigs.push(undefined)
  }
}
parentPort?.postMessage(sigs)
