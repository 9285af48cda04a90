/**
 * The stat worker: lstats a list of entry files in its own thread and posts back each file's
 * signature, so a restart's stat of every file (100,000 system calls and Stats objects) runs
 * beside the snapshot parse in the service's thread instead of after it. The first pass is posted
 * in chunks of CHUNK files (each an array, in order), so the service's thread takes the rows of a
 * chunk while the next is stat-ed. Then it waits: `true`
 * stats the same files again and posts the positions of those whose signature is not the one it
 * found first (the check once the file watcher listens, see `CollectionIndex.caughtUp`), `false`
 * ends it. Loads nothing but `file-signature.ts`. A link (to be checked against the repository) or
 * an error other than a missing file is left to the caller (undefined).
 */
import { lstatSync } from 'node:fs'
import { parentPort, workerData } from 'node:worker_threads'
import { signatureOf } from './file-signature.js'

/**
 * The files, joined by NUL (one string crosses threads far faster than 100,000 of them). Each path
 * is cut from it when stat-ed, not split up front: 100,000 strings alive at once went through the
 * capped young generation into the old one, 100-150 ms of garbage collection before the first stat
 * (issue 18, seventh pass); a path cut for one stat dies young.
 */
let joined = ''

/** Files per posted chunk of the first pass (matches the service thread's step between yields). */
const CHUNK = 4096

function statAll (post: ((chunk: Array<string | null | undefined>) => void) | null): Array<string | null | undefined> {
  const sigs: Array<string | null | undefined> = []
  let posted = 0
  // The same paths as `joined.split('\0')` (none for an empty string).
  for (let from = 0; joined !== '' && from <= joined.length;) {
    let to = joined.indexOf('\0', from)
    if (to < 0) to = joined.length
    const file = joined.slice(from, to)
    from = to + 1
    try {
      const st = lstatSync(file, { throwIfNoEntry: false })
      sigs.push(st === undefined ? null : st.isSymbolicLink() ? undefined : st.isFile() ? signatureOf(st) : null)
    } catch {
      sigs.push(undefined)
    }
    if (post !== null && sigs.length - posted === CHUNK) { post(sigs.slice(posted)); posted = sigs.length }
  }
  if (post !== null && (posted < sigs.length || sigs.length === 0)) post(sigs.slice(posted))
  return sigs
}

/** Stats the files, posts the first pass, then waits for `again` (true) or the end (false). */
function run (given: string): void {
  joined = given
  const first = statAll(chunk => { parentPort?.postMessage(chunk) })
  parentPort?.once('message', (again: boolean) => { second(first, again) })
}

function second (first: Array<string | null | undefined>, again: boolean): void {
  if (again) {
    const now = statAll(null)
    const changed: number[] = []
    for (let i = 0; i < now.length; i++) if (now[i] !== first[i] || now[i] === undefined) changed.push(i)
    parentPort?.postMessage(changed)
  }
  parentPort?.close()
}

// The files come with the worker's data, or (a worker started before they were known) as its first message (false: none, end).
const given = (workerData as { files?: string } | null)?.files
if (given !== undefined) run(given)
else parentPort?.once('message', (joined: string | false) => { if (joined === false) parentPort?.close(); else run(joined) })
