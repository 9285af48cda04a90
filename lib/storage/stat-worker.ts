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
 * `CollectionIndex.caughtUp`), `false` ends it. Loads nothing but `stat-one.ts`, `file-signature.ts` and `record-file.ts`. A link (to be checked against the repository) or
 * an error other than a missing file is left to the caller (undefined).
 */
import { parentPort, workerData } from 'node:worker_threads'
import { nextRecord, recordFileAt, recordSigIs } from './record-file.js'
import { sigFlag, STAT_CHUNK, statOne, type StatResult } from './stat-one.js'

/**
 * The files, joined by NUL (one string crosses threads far faster than 100,000 of them). Each path
 * is cut from it when stat-ed, not split up front: 100,000 strings alive at once went through the
 * capped young generation into the old one, 100-150 ms of garbage collection before the first stat
 * (issue 18, seventh pass); a path cut for one stat dies young.
 */
let joined = ''

/** The files as given: NUL-joined, or a snapshot's records (`PackedFiles` in `stat-files.ts`). */
type WorkerFiles = { files: string } | { records: SharedArrayBuffer, prefix: string, suffix: string, statAt: number }
/** Packed records (`PackedFiles`): each names its file, or its id's `prefix + id + suffix`. */
let packed: { records: Buffer, prefix: string, suffix: string, statAt: number } | null = null
/** Where each chunk's first file is in `joined`, or its first record in `packed.records`. */
const chunkStarts: number[] = []
/** Per chunk: 0 unclaimed, 1 claimed (by this worker or the service's thread). */
let claims: Int32Array | null = null

/**
 * Stats the files in order; in the first pass (`post`), only the chunks this worker claims, posting
 * each (the others are left empty).
 */
function statAll (post: ((k: number, chunk: StatResult[]) => void) | null): StatResult[] {
  const sigs: StatResult[] = []
  let mine = true
  // The same paths as `joined.split('\0')` (none for an empty string); packed, one per record.
  const end = packed !== null ? packed.records.length : joined === '' ? -1 : joined.length
  for (let from = 0, i = 0; from <= end && (packed === null || from < end); i++) {
    let to = packed !== null ? nextRecord(packed.records, from) : joined.indexOf('\0', from)
    if (to < 0) to = joined.length
    if (i % STAT_CHUNK === 0) chunkStarts[i / STAT_CHUNK] = from
    if (i % STAT_CHUNK === 0 && post !== null) {
      if (mine && i > 0) post(i / STAT_CHUNK - 1, sigs.slice(i - STAT_CHUNK, i))
      const k = i / STAT_CHUNK
      mine = claims === null || k >= claims.length || Atomics.compareExchange(claims, k, 0, 1) === 0
    }
    if (mine || post === null) sigs.push(statOne(packed === null ? joined.slice(from, to) : recordFileAt(packed.records, from, packed.prefix, packed.suffix)))
    else sigs.push(undefined)
    from = packed !== null ? to : to + 1
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
    packed = { records: Buffer.from(given.records), prefix: given.prefix, suffix: given.suffix, statAt: given.statAt }
  }
  claims = shared === undefined ? null : new Int32Array(shared)
  const first = statAll((k, sigs) => {
    if (packed === null) {
      parentPort?.postMessage({ k, sigs })
      return
    }
    // Packed: how each compares with its record (`sigFlag`), not the strings.
    const flags = new Uint8Array(sigs.length)
    for (let j = 0, start = chunkStarts[k]!; j < sigs.length; j++, start = nextRecord(packed.records, start)) {
      const sig = sigs[j]
      flags[j] = sigFlag(sig, typeof sig === 'string' && recordSigIs(packed.records, start, sig), packed.statAt)
    }
    parentPort?.postMessage({ k, sigs: flags }, [flags.buffer])
  })
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
if (data !== null && ('files' in data || 'records' in data)) run(data, data.claims)
else parentPort?.once('message', (msg: (WorkerFiles & { claims: SharedArrayBuffer }) | false) => { if (msg === false) parentPort?.close(); else run(msg, msg.claims) })
