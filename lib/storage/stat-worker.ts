/**
 * The stat worker: lstats a list of entry files in its own thread and posts back each file's
 * signature, so a restart's stat of every file (100,000 system calls and Stats objects) runs
 * beside the snapshot parse in the service's thread instead of after it. Then it waits: `true`
 * stats the same files again and posts the positions of those whose signature is not the one it
 * found first (the check once the file watcher listens, see `CollectionIndex.caughtUp`), `false`
 * ends it. Loads nothing but `file-signature.ts`. A link (to be checked against the repository) or
 * an error other than a missing file is left to the caller (undefined).
 */
import { lstatSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import { signatureOf } from './file-signature.js'

/** The files, joined by NUL (one string crosses threads far faster than 100,000 of them). */
const joined = (workerData as { files: string }).files
const files = joined === '' ? [] : joined.split('\0')

function statAll (): Array<string | null | undefined> {
  const sigs: Array<string | null | undefined> = []
  for (const file of files) {
    try {
      const st = lstatSync(file, { throwIfNoEntry: false })
      sigs.push(st === undefined ? null : st.isSymbolicLink() ? undefined : st.isFile() ? signatureOf(st) : null)
    } catch {
      sigs.push(undefined)
    }
  }
  return sigs
}

const first = statAll()
parentPort?.postMessage(first)
parentPort?.once('message', (again: boolean) => {
  if (again) {
    const now = statAll()
    const changed: number[] = []
    for (let i = 0; i < now.length; i++) if (now[i] !== first[i] || now[i] === undefined) changed.push(i)
    parentPort?.postMessage(changed)
  }
  parentPort?.close()
})
