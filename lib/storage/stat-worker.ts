/**
 * The stat worker: lstats a list of entry files in its own thread and posts back each file's
 * signature, so a restart's stat of every file (100,000 system calls and Stats objects) runs
 * beside the snapshot parse in the service's thread instead of after it. The first pass is posted
 * in chunks of CHUNK files (`{ k, sigs }`: chunk k's results), so the service's thread takes the rows
 * of a chunk while the next is stat-ed. The service's thread, when it would otherwise wait, stats
 * chunks itself from the end of the list (`stat-files.ts`): each chunk is claimed by one thread
 * only, through a shared flag per chunk. Then the worker waits: `{ again: true, filled }` (the
 * service thread's chunks and their results) stats every file again and posts the positions of
 * those whose signature is not the one found first (the check once the file watcher listens, see
 * `CollectionIndex.caughtUp`), `false` ends it. Loads nothing but `stat-one.ts` and `file-signature.ts`. A link (to be checked against the repository) or
 * an error other than a missing file is left to the caller (undefined).
 */
import { parentPort, workerData } from 'node:worker_threads'
import { STAT_CHUNK, statOne, type StatResult } from './stat-one.js'

/**
 * The files, joined by NUL (one string crosses threads far faster than 100,000 of them). Each path
 * is cut from it when stat-ed, not split up front: 100,000 strings alive at once went through the
 * capped young generation into the old one, 100-150 ms of garbage collection before the first stat
 * (issue 18, seventh pass); a path cut for one stat dies young.
 */
let joined = ''

/** The files as given: NUL-joined, or packed names (`PackedFiles` in `stat-files.ts`). */
type WorkerFiles = { files: string } | { names: SharedArrayBuffer, prefix: string, suffix: string, own: Array<[number, string]> }
/** Packed names (`PackedFiles`): a file is `prefix + name + suffix`, or `own`'s for an empty name. */
let packed: { prefix: string, suffix: string, own: Map<number, string> } | null = null
/** Per chunk: 0 unclaimed, 1 claimed (by this worker or the service's thread). */
let claims: Int32Array | null = null

/**
 * Stats the files in order; in the first pass (`post`), only the chunks this worker claims, posting
 * each (the others are left empty).
 */
function statAll (post: ((k: number, chunk: StatResult[]) => void) | null): StatResult[] {
  const sigs: StatResult[] = []
  let mine = true
  // The same paths as `joined.split('\0')` (none for an empty string); packed, each name ends with a NUL.
  for (let from = 0, i = 0; packed !== null ? from < joined.length : joined !== '' && from <= joined.length; i++) {
    let to = joined.indexOf('\0', from)
    if (to < 0) to = joined.length
    if (i % STAT_CHUNK === 0 && post !== null) {
      if (mine && i > 0) post(i / STAT_CHUNK - 1, sigs.slice(i - STAT_CHUNK, i))
      const k = i / STAT_CHUNK
      mine = claims === null || k >= claims.length || Atomics.compareExchange(claims, k, 0, 1) === 0
    }
    if (mine || post === null) sigs.push(statOne(packed === null ? joined.slice(from, to) : from === to ? packed.own.get(i) ?? '' : packed.prefix + joined.slice(from, to) + packed.suffix))
    else sigs.push(undefined)
    from = to + 1
  }
  if (post !== null && mine && sigs.length > 0) {
    const last = Math.floor((sigs.length - 1) / STAT_CHUNK)
    post(last, sigs.slice(last * STAT_CHUNK))
  }
  return sigs
}

/** Stats the files, posts the first pass, then waits for `again` or the end (false). */
function run (given: WorkerFiles, shared: SharedArrayBuffer | undefined): void {
  if ('files' in given) {
    joined = given.files
  } else {
    // One decode of every name.
    joined = Buffer.from(given.names).toString('utf8')
    packed = { prefix: given.prefix, suffix: given.suffix, own: new Map(given.own) }
  }
  claims = shared === undefined ? null : new Int32Array(shared)
  const first = statAll((k, sigs) => { parentPort?.postMessage({ k, sigs }) })
  parentPort?.once('message', (again: false | { again: true, filled: Array<[number, StatResult[]]> }) => { second(first, again) })
}

function second (first: StatResult[], again: false | { again: true, filled: Array<[number, StatResult[]]> }): void {
  if (again !== false) {
    // The chunks the service's thread stat-ed in the first pass.
    for (const [k, sigs] of again.filled) for (let j = 0; j < sigs.length; j++) first[k * STAT_CHUNK + j] = sigs[j]
    const now = statAll(null)
    const changed: number[] = []
    for (let i = 0; i < now.length; i++) if (now[i] !== first[i] || now[i] === undefined) changed.push(i)
    parentPort?.postMessage(changed)
  }
  parentPort?.close()
}

// The files come with the worker's data, or (a worker started before they were known) as its first message (false: none, end).
const data = workerData as (WorkerFiles & { claims?: SharedArrayBuffer }) | null
if (data !== null && ('files' in data || 'names' in data)) run(data, data.claims)
else parentPort?.once('message', (msg: (WorkerFiles & { claims: SharedArrayBuffer }) | false) => { if (msg === false) parentPort?.close(); else run(msg, msg.claims) })
