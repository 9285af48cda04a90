/**
 * Builds a collection's new full-text segment from its previous one (the persisted file) and the
 * files of the entries changed since, as search engines merge segments: a document of the previous
 * segment whose recorded file signature is the entry's signature now keeps its postings (renumbered),
 * every other entry is read and tokenized. The result is the segment a full build of the same files
 * makes, array for array (`buildSegment`): the same documents in id order, the same terms sorted, each
 * term's postings in the same two runs with the same flags, the same body lengths. A background rebuild
 * at 100,000 entries read and tokenized 100,000 files (~12 s of CPU); this reads the changed ones
 * and decodes the previous postings once (issue 18).
 */
import { readEntryFile } from '../storage/entry-file.js'
import { formatOfFile } from '../storage/entry-paths.js'
import { bodyLength, entryTerms, IN_BODY } from './entry-terms.js'
import type { SegmentData, SegmentView } from './search-segment.js'
import { termOf } from './search-segment.js'
import type { BuiltSegment, SegmentJob } from './build-segment.js'
import type { LoadedSegment } from './search-snapshot.js'

/** How many entries `mergeSegment` goes through between two calls of its `check`. */
const CHECK_EVERY = 1024

/** A merged segment, and how many of its documents came from the previous one. */
export interface MergedSegment extends BuiltSegment {
  /** Documents whose postings were taken from the previous segment (the rest were read). */
  reused: number
}

/**
 * Builds the segment of the job's files, taking from `previous` every document whose recorded
 * signature (not '') equals the one given for its entry now, and reading the others.
 * @param job the entries (id, absolute file) and how to read them
 * @param sigs the signature of each job file now ('' when it is not to be trusted: read)
 * @param previous the previous segment, as loaded from its file (checked whole)
 * @param check called every CHECK_EVERY entries (the search process: is its parent still there?)
 * @returns the segment, which job file each document is, and how many were reused
 */
export async function mergeSegment (job: SegmentJob, sigs: readonly string[], previous: LoadedSegment, check?: () => void): Promise<MergedSegment> {
  // Document order: by id, as buildSegment numbers them.
  const order = Array.from(job.files.keys()).sort((a, b) => {
    const x = (job.files[a] as [string, string])[0]
    const y = (job.files[b] as [string, string])[0]
    return x < y ? -1 : x > y ? 1 : 0
  })
  const prevIds = previous.ids
  const prevSigs = previous.sigs
  const prevBodyLen = previous.segment.bodyLen
  /** The new document number of each previous document taken (-1: not taken). */
  const renumber = new Int32Array(prevIds.length).fill(-1)
  /** The read documents' postings by term: `doc * 32 + flags`, docs ascending. */
  const fresh = new Map<string, number[]>()
  const bodyLen: number[] = []
  const kept: number[] = []
  let p = 0
  for (const [n, i] of order.entries()) {
    if (check !== undefined && n % CHECK_EVERY === 0) check()
    const [id, file] = job.files[i] as [string, string]
    // Both lists are sorted by id: one walk.
    while (p < prevIds.length && (prevIds[p] as string) < id) p++
    const sig = sigs[i] as string
    if (p < prevIds.length && prevIds[p] === id && sig !== '' && prevSigs[p] === sig) {
      renumber[p] = kept.length
      bodyLen.push(prevBodyLen[p] as number)
      kept.push(i)
      continue
    }
    const state = await readEntryFile(job.repoRealDir, file, formatOfFile(file, job.format))
    if (state.kind === 'missing') continue
    const terms = entryTerms(id, state.kind === 'ok' ? state.data : undefined, job.titleField)
    const doc = kept.length
    bodyLen.push(Math.min(65_535, bodyLength(terms)))
    for (const [term, flags] of terms) {
      let list = fresh.get(term)
      if (list === undefined) { list = []; fresh.set(term, list) }
      list.push(doc * 32 + flags)
    }
    kept.push(i)
  }
  const reused = kept.length - countRead(renumber, kept.length)
  const segment = mergeTerms(previous.segment.open(), renumber, fresh, bodyLen)
  return { segment, order: Uint32Array.from(kept), reused }
}

/** How many of `docs` documents were not taken from the previous segment. */
function countRead (renumber: Int32Array, docs: number): number {
  let taken = 0
  for (const doc of renumber) if (doc >= 0) taken++
  return docs - taken
}

/** A byte array that grows as postings are encoded into it. */
class Bytes {
  bytes = new Uint8Array(1 << 20)
  length = 0

  reserve (more: number): void {
    if (this.length + more <= this.bytes.length) return
    let size = this.bytes.length * 2
    while (size < this.length + more) size *= 2
    const grown = new Uint8Array(size)
    grown.set(this.bytes.subarray(0, this.length))
    this.bytes = grown
  }
}

/**
 * Merges the previous segment's terms (their postings renumbered, documents not taken left out)
 * with the read documents' terms into the new segment's arrays. Each run of a term (postings.ts) is
 * decoded, renumbered, merged with the read documents' postings of that run and encoded again in one
 * pass, straight into the new postings bytes.
 */
function mergeTerms (view: SegmentView, renumber: Int32Array, fresh: Map<string, number[]>, bodyLen: number[]): SegmentData {
  const freshTerms = [...fresh.keys()].sort()
  const oldTerms = view.df.length
  const terms: string[] = []
  const termStart: number[] = []
  const postStart: number[] = []
  const bodyStart: number[] = []
  const df: number[] = []
  const out = new Bytes()
  let chars = 0
  // The previous postings, a chunk of terms at a time (as a search reads them): `bytes[0]` is byte `base`.
  let bytes: Uint8Array = new Uint8Array(0)
  let base = 0
  let loaded = 0
  const { postStart: oldPost, bodyStart: oldBody } = view
  const load = (t: number): void => {
    const begin = oldPost[t] as number
    if ((oldPost[t + 1] as number) <= loaded && begin >= base) return
    let last = t + 1
    while (last < oldTerms && (oldPost[last + 1] as number) - begin <= view.chunk) last++
    base = begin
    loaded = oldPost[last] as number
    bytes = view.postings(base, loaded)
  }
  /** Encodes one run: the previous postings in bytes [from, to) renumbered, merged with the read ones of that run; returns how many. */
  const run = (body: boolean, from: number, to: number, list: readonly number[] | undefined): number => {
    let n = 0
    let last = 0
    const put = (doc: number, flags: number): void => {
      let v = body ? (doc - last) * 4 + ((flags & 31) >> 3) : (doc - last) * 32 + (flags & 31)
      last = doc
      if (out.length + 8 > out.bytes.length) out.reserve(8)
      const b = out.bytes
      while (v >= 128) {
        b[out.length++] = (v % 128) | 128
        v = Math.floor(v / 128)
      }
      b[out.length++] = v
      n++
    }
    // The read documents' postings of this run (body only: flags & 7 === IN_BODY), docs ascending.
    let j = 0
    const next = (): number => {
      if (list === undefined) return -1
      while (j < list.length && (((list[j] as number) & 7) === IN_BODY) !== body) j++
      return j < list.length ? list[j] as number : -1
    }
    let f = next()
    let i = from
    let doc = 0
    while (i < to) {
      let c = bytes[i++] as number
      let v = c & 127
      let shift = 128
      while (c >= 128) {
        c = bytes[i++] as number
        v += (c & 127) * shift
        shift *= 128
      }
      let flags: number
      if (body) { doc += Math.floor(v / 4); flags = IN_BODY | ((v & 3) << 3) } else { doc += Math.floor(v / 32); flags = v & 31 }
      const now = renumber[doc] as number
      if (now < 0) continue
      while (f >= 0 && Math.floor(f / 32) < now) { put(Math.floor(f / 32), f & 31); j++; f = next() }
      put(now, flags)
    }
    while (f >= 0) { put(Math.floor(f / 32), f & 31); j++; f = next() }
    return n
  }
  try {
    let a = 0
    let b = 0
    while (a < oldTerms || b < freshTerms.length) {
      const oldTerm = a < oldTerms ? termOf(view, a) : null
      const freshTerm = b < freshTerms.length ? freshTerms[b] as string : null
      const at = out.length
      let term: string
      let count: number
      let split: number
      if (oldTerm !== null && (freshTerm === null || oldTerm <= freshTerm)) {
        const list = oldTerm === freshTerm ? fresh.get(oldTerm) : undefined
        if (list !== undefined) b++
        const t = a++
        load(t)
        count = run(false, (oldPost[t] as number) - base, (oldBody[t] as number) - base, list)
        split = out.length
        count += run(true, (oldBody[t] as number) - base, (oldPost[t + 1] as number) - base, list)
        term = oldTerm
      } else {
        term = freshTerm as string
        b++
        const list = fresh.get(term)
        count = run(false, 0, 0, list)
        split = out.length
        count += run(true, 0, 0, list)
      }
      if (count === 0) continue
      terms.push(term)
      termStart.push(chars)
      postStart.push(at)
      bodyStart.push(split)
      df.push(count)
      chars += term.length
    }
  } finally {
    view.close()
  }
  termStart.push(chars)
  postStart.push(out.length)
  return {
    dict: terms.join(''),
    termStart: Uint32Array.from(termStart),
    postStart: Uint32Array.from(postStart),
    bodyStart: Uint32Array.from(bodyStart),
    postings: out.bytes.slice(0, out.length),
    df: Uint32Array.from(df),
    bodyLen: Uint16Array.from(bodyLen),
    docs: bodyLen.length
  }
}
