/**
 * The persisted full-text segment of one collection, under `.git/cms/search/<collection>.bin`, so
 * a restart loads it instead of re-reading and re-tokenizing every file. Like the index snapshot
 * (index-snapshot.ts) it is only a hint: each document carries the signature (`sig`) of the file
 * it was built from, and the loader drops every document whose file's current row has another one.
 * On any doubt (another format, collection definition or repository path, a size or checksum that
 * does not match, arrays out of order) it is ignored and the segment is built in full.
 *
 * Layout: 16 bytes (magic, header length, zero), the header JSON, padding to 8, the arrays region
 * (termStart, postStart, bodyStart, df: u32; bodyLen: u16; postings: u8; each padded to 8), then
 * the strings region (the dictionary as UTF-16LE, the ids and the signatures as JSON arrays). The
 * arrays region is read into one buffer the segment's typed arrays are views of (no copy, off the
 * heap); the strings region is read, decoded and dropped.
 */
import { createHash } from 'node:crypto'
import { open } from 'node:fs/promises'
import path from 'node:path'
import { writeFileAtomic } from '../storage/atomic-write.js'
import type { Collection } from '../storage/collection-registry.js'
import { IndexSnapshot } from '../storage/index-snapshot.js'
import type { SegmentData } from './search-segment.js'

/**
 * The file format. Bump it whenever a segment's arrays, the postings' encoding or what becomes a
 * term (tokenize.ts, entry-terms.ts) changes: older files are then ignored.
 */
export const SEARCH_SNAPSHOT_FORMAT = 1

/** The folder of the persisted segments, under `.git/cms`. */
export const SEARCH_SNAPSHOT_DIR = 'search'

const MAGIC = Buffer.from('gcmsfts\n', 'latin1')
const PREFIX_BYTES = 16
/** A header longer than this is not one of ours. */
const MAX_HEADER_BYTES = 64 * 1024

/** A persisted segment: its arrays, its documents' ids (sorted) and the signature each was built from. */
export interface PersistedSegment {
  segment: SegmentData
  ids: string[]
  /** The file signature document i was built from ('' when it is not to be trusted). */
  sigs: string[]
}

interface Header {
  format: number
  key: string
  repo: string
  docs: number
  terms: number
  dictChars: number
  postingsBytes: number
  arraysBytes: number
  dictBytes: number
  idsBytes: number
  sigsBytes: number
  sha256: string
}

/** One collection's persisted segment file. */
export class SearchSnapshot {
  /** Absolute path of the file. */
  readonly file: string
  /** The collection definition key of the index snapshot (index-snapshot.ts). */
  readonly key: string
  readonly #repo: string

  /**
   * @param stateDir `.git/cms`
   * @param collection the collection (its definition is part of the key)
   * @param repoRealDir the repository's real path
   */
  constructor (stateDir: string, collection: Collection, repoRealDir: string) {
    this.file = path.join(stateDir, SEARCH_SNAPSHOT_DIR, `${collection.name}.bin`)
    this.key = new IndexSnapshot(stateDir, collection, repoRealDir).key
    this.#repo = repoRealDir
  }

  /**
   * Reads the persisted segment.
   * @returns it, or null when there is none or it is in doubt
   */
  async read (): Promise<PersistedSegment | null> {
    let handle
    try {
      handle = await open(this.file, 'r')
    } catch {
      return null
    }
    try {
      return await this.#read(handle)
    } catch {
      return null
    } finally {
      await handle.close()
    }
  }

  async #read (handle: import('node:fs/promises').FileHandle): Promise<PersistedSegment | null> {
    const size = (await handle.stat()).size
    const prefix = Buffer.alloc(PREFIX_BYTES)
    if ((await handle.read(prefix, 0, PREFIX_BYTES, 0)).bytesRead !== PREFIX_BYTES || !prefix.subarray(0, 8).equals(MAGIC)) return null
    const headerBytes = prefix.readUInt32LE(8)
    if (headerBytes > MAX_HEADER_BYTES) return null
    const headerBuf = Buffer.alloc(headerBytes)
    if ((await handle.read(headerBuf, 0, headerBytes, PREFIX_BYTES)).bytesRead !== headerBytes) return null
    const h = JSON.parse(headerBuf.toString('utf8')) as unknown
    if (!isHeader(h) || h.format !== SEARCH_SNAPSHOT_FORMAT || h.key !== this.key || h.repo !== this.#repo) return null
    const layout = arraysLayout(h.terms, h.docs, h.postingsBytes)
    if (layout.total !== h.arraysBytes || h.dictBytes !== h.dictChars * 2) return null
    const start = pad8(PREFIX_BYTES + headerBytes)
    const stringsBytes = h.dictBytes + h.idsBytes + h.sigsBytes
    if (size !== start + h.arraysBytes + stringsBytes) return null
    // The arrays in a buffer of their own (the typed arrays are views of it).
    const arrays = new ArrayBuffer(h.arraysBytes)
    const arraysView = new Uint8Array(arrays)
    if (await readFully(handle, arraysView, start) !== h.arraysBytes) return null
    const strings = Buffer.allocUnsafeSlow(stringsBytes)
    if (await readFully(handle, strings, start + h.arraysBytes) !== stringsBytes) return null
    const hash = createHash('sha256').update(arraysView).update(strings).digest('hex')
    if (hash !== h.sha256) return null
    const at = layout.at
    const segment: SegmentData = {
      termStart: new Uint32Array(arrays, at.termStart, h.terms + 1),
      postStart: new Uint32Array(arrays, at.postStart, h.terms + 1),
      bodyStart: new Uint32Array(arrays, at.bodyStart, h.terms),
      df: new Uint32Array(arrays, at.df, h.terms),
      bodyLen: new Uint16Array(arrays, at.bodyLen, h.docs),
      postings: new Uint8Array(arrays, at.postings, h.postingsBytes),
      dict: strings.toString('utf16le', 0, h.dictBytes),
      docs: h.docs
    }
    const ids = JSON.parse(strings.toString('utf8', h.dictBytes, h.dictBytes + h.idsBytes)) as unknown
    const sigs = JSON.parse(strings.toString('utf8', h.dictBytes + h.idsBytes, stringsBytes)) as unknown
    if (!isStrings(ids, h.docs) || !isStrings(sigs, h.docs) || !wellFormed(segment, ids)) return null
    return { segment, ids, sigs }
  }

  /**
   * Writes the segment atomically (temp file, fsync, rename, directory fsync).
   * @param persisted the segment, its ids and signatures
   * @returns resolves once the file is durable
   */
  async write (persisted: PersistedSegment): Promise<void> {
    const s = persisted.segment
    const terms = s.df.length
    const layout = arraysLayout(terms, s.docs, s.postings.byteLength)
    const dict = Buffer.from(s.dict, 'utf16le')
    const ids = Buffer.from(JSON.stringify(persisted.ids), 'utf8')
    const sigs = Buffer.from(JSON.stringify(persisted.sigs), 'utf8')
    const arrays = Buffer.alloc(layout.total)
    const put = (view: ArrayBufferView, at: number): void => { arrays.set(new Uint8Array(view.buffer, view.byteOffset, view.byteLength), at) }
    put(s.termStart, layout.at.termStart)
    put(s.postStart, layout.at.postStart)
    put(s.bodyStart, layout.at.bodyStart)
    put(s.df, layout.at.df)
    put(s.bodyLen, layout.at.bodyLen)
    put(s.postings, layout.at.postings)
    const header: Header = {
      format: SEARCH_SNAPSHOT_FORMAT,
      key: this.key,
      repo: this.#repo,
      docs: s.docs,
      terms,
      dictChars: s.dict.length,
      postingsBytes: s.postings.byteLength,
      arraysBytes: layout.total,
      dictBytes: dict.byteLength,
      idsBytes: ids.byteLength,
      sigsBytes: sigs.byteLength,
      sha256: createHash('sha256').update(arrays).update(dict).update(ids).update(sigs).digest('hex')
    }
    const headerBuf = Buffer.from(JSON.stringify(header), 'utf8')
    const prefix = Buffer.alloc(pad8(PREFIX_BYTES + headerBuf.byteLength) - headerBuf.byteLength)
    MAGIC.copy(prefix, 0)
    prefix.writeUInt32LE(headerBuf.byteLength, 8)
    // The header after the 16-byte prefix, then the zero padding up to 8.
    const head = Buffer.concat([prefix.subarray(0, PREFIX_BYTES), headerBuf, prefix.subarray(PREFIX_BYTES)])
    await writeFileAtomic(this.file, Buffer.concat([head, arrays, dict, ids, sigs]))
  }
}

function pad8 (n: number): number {
  return Math.ceil(n / 8) * 8
}

/** Where each array sits in the arrays region, each starting at a multiple of 8. */
function arraysLayout (terms: number, docs: number, postingsBytes: number): { at: Record<'termStart' | 'postStart' | 'bodyStart' | 'df' | 'bodyLen' | 'postings', number>, total: number } {
  let total = 0
  const take = (bytes: number): number => { const at = total; total += pad8(bytes); return at }
  const at = {
    termStart: take((terms + 1) * 4),
    postStart: take((terms + 1) * 4),
    bodyStart: take(terms * 4),
    df: take(terms * 4),
    bodyLen: take(docs * 2),
    postings: take(postingsBytes)
  }
  return { at, total }
}

async function readFully (handle: import('node:fs/promises').FileHandle, into: Uint8Array, position: number): Promise<number> {
  let done = 0
  while (done < into.byteLength) {
    const { bytesRead } = await handle.read(into, done, into.byteLength - done, position + done)
    if (bytesRead === 0) break
    done += bytesRead
  }
  return done
}

/** The offsets ascend and end where their arrays end; the ids are sorted and distinct. */
function wellFormed (s: SegmentData, ids: string[]): boolean {
  const terms = s.df.length
  if (s.termStart[0] !== 0 || s.termStart[terms] !== s.dict.length || s.postStart[0] !== 0 || s.postStart[terms] !== s.postings.byteLength) return false
  for (let i = 0; i < terms; i++) {
    const p = s.postStart[i] as number
    const b = s.bodyStart[i] as number
    if ((s.termStart[i] as number) > (s.termStart[i + 1] as number) || p > (s.postStart[i + 1] as number) || b < p || b > (s.postStart[i + 1] as number)) return false
  }
  for (let i = 1; i < ids.length; i++) if (!((ids[i - 1] as string) < (ids[i] as string))) return false
  return true
}

function isStrings (v: unknown, length: number): v is string[] {
  return Array.isArray(v) && v.length === length && v.every(s => typeof s === 'string')
}

function isHeader (v: unknown): v is Header {
  if (typeof v !== 'object' || v === null) return false
  const o = v as Record<string, unknown>
  const count = (x: unknown): boolean => typeof x === 'number' && Number.isInteger(x) && x >= 0
  return typeof o.format === 'number' && typeof o.key === 'string' && typeof o.repo === 'string' && typeof o.sha256 === 'string' &&
    ['docs', 'terms', 'dictChars', 'postingsBytes', 'arraysBytes', 'dictBytes', 'idsBytes', 'sigsBytes'].every(k => count(o[k]))
}
