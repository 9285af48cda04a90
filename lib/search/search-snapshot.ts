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
 * whole file is read once at load to check its SHA-256, keeping only the documents' body lengths,
 * ids and signatures, plus a big segment's term arrays and dictionary: searches then read the rest
 * from the file (segment-file.ts). A segment just written is read the same way from then on.
 */
import { createHash } from 'node:crypto'
import { writeSync } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { writeFileInStepsAtomic } from '../storage/atomic-write.js'
import type { Collection } from '../storage/collection-registry.js'
import { definitionKey } from '../storage/index-store.js'
import { SearchSegment, type SegmentData, type TermTable } from './search-segment.js'
import { identityOf, SegmentFile, type SegmentFileLayout } from './segment-file.js'

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

/** A segment to persist: its arrays, its documents' ids (sorted) and the signature each was built from. */
export interface PersistedSegment {
  segment: SegmentData
  ids: string[]
  /** The file signature document i was built from ('' when it is not to be trusted). */
  sigs: string[]
}

/** A persisted segment as loaded: read from its file by searches (segment-file.ts). */
export interface LoadedSegment {
  segment: SearchSegment
  ids: string[]
  /** The file signature document i was built from ('' when it is not to be trusted). */
  sigs: string[]
}

/** Bytes of the postings hashed per read at load (not kept). */
const HASH_CHUNK_BYTES = 1024 * 1024

/** Where a segment file is and what it must carry: enough for the search process (search-worker.ts), which has no collection definition. */
export interface SnapshotPlace {
  /** Absolute path of the file. */
  file: string
  /** The collection definition key (`IndexSnapshot.key`). */
  key: string
  /** The repository's real path. */
  repo: string
}

interface Header {
  /** The build that wrote it (a random token the writer was given), when one was given. */
  build?: string
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
   * @param stateDir `.git/cms` (or the file's place, as `place` gives it)
   * @param collection the collection (its definition is part of the key)
   * @param repoRealDir the repository's real path
   */
  constructor (stateDir: string, collection: Collection, repoRealDir: string)
  constructor (place: SnapshotPlace)
  constructor (stateDir: string | SnapshotPlace, collection?: Collection, repoRealDir?: string) {
    if (typeof stateDir !== 'string') {
      this.file = stateDir.file
      this.key = stateDir.key
      this.#repo = stateDir.repo
      return
    }
    const c = collection as Collection
    this.file = path.join(stateDir, SEARCH_SNAPSHOT_DIR, `${c.name}.bin`)
    this.key = definitionKey(c)
    this.#repo = repoRealDir as string
  }

  /** The file, key and repository path (to hand to another process). */
  get place (): SnapshotPlace {
    return { file: this.file, key: this.key, repo: this.#repo }
  }

  /**
   * Reads the persisted segment and checks it whole.
   * @param build when given, the file counts only if written by the build given this token (`write`)
   * @returns it, or null when there is none or it is in doubt
   */
  async read (build?: string): Promise<LoadedSegment | null> {
    let handle
    try {
      handle = await open(this.file, 'r')
    } catch {
      return null
    }
    try {
      return await this.#read(handle, build)
    } catch {
      return null
    } finally {
      await handle.close()
    }
  }

  async #read (handle: FileHandle, build: string | undefined): Promise<LoadedSegment | null> {
    const st = await handle.stat()
    const prefix = Buffer.alloc(PREFIX_BYTES)
    if ((await handle.read(prefix, 0, PREFIX_BYTES, 0)).bytesRead !== PREFIX_BYTES || !prefix.subarray(0, 8).equals(MAGIC)) return null
    const headerBytes = prefix.readUInt32LE(8)
    if (headerBytes > MAX_HEADER_BYTES) return null
    const headerBuf = Buffer.alloc(headerBytes)
    if ((await handle.read(headerBuf, 0, headerBytes, PREFIX_BYTES)).bytesRead !== headerBytes) return null
    const h = JSON.parse(headerBuf.toString('utf8')) as unknown
    if (!isHeader(h) || h.format !== SEARCH_SNAPSHOT_FORMAT || h.key !== this.key || h.repo !== this.#repo) return null
    if (build !== undefined && h.build !== build) return null
    const { at, total } = arraysLayout(h.terms, h.docs, h.postingsBytes)
    if (total !== h.arraysBytes || h.dictBytes !== h.dictChars * 2) return null
    const start = pad8(PREFIX_BYTES + headerBytes)
    if (st.size !== start + h.arraysBytes + h.dictBytes + h.idsBytes + h.sigsBytes) return null
    const hash = createHash('sha256')
    // The term arrays and body lengths (everything before the postings) in a buffer of their own.
    const head = new Uint8Array(at.postings)
    if (await readFully(handle, head, start) !== head.byteLength) return null
    hash.update(head)
    // The postings (and the region's padding) are only hashed.
    const chunk = Buffer.allocUnsafeSlow(Math.min(HASH_CHUNK_BYTES, Math.max(1, h.arraysBytes - at.postings)))
    for (let done = at.postings; done < h.arraysBytes;) {
      const n = Math.min(chunk.byteLength, h.arraysBytes - done)
      if (await readFully(handle, chunk.subarray(0, n), start + done) !== n) return null
      hash.update(chunk.subarray(0, n))
      done += n
    }
    const strings = async (bytes: number, at: number): Promise<Buffer | null> => {
      const buf = Buffer.allocUnsafe(bytes)
      if (await readFully(handle, buf, at) !== bytes) return null
      hash.update(buf)
      return buf
    }
    const dictBuf = await strings(h.dictBytes, start + h.arraysBytes)
    const idsBuf = await strings(h.idsBytes, start + h.arraysBytes + h.dictBytes)
    const sigsBuf = await strings(h.sigsBytes, start + h.arraysBytes + h.dictBytes + h.idsBytes)
    if (dictBuf === null || idsBuf === null || sigsBuf === null || hash.digest('hex') !== h.sha256) return null
    const buffer = head.buffer
    const table = {
      termStart: new Uint32Array(buffer, at.termStart, h.terms + 1),
      postStart: new Uint32Array(buffer, at.postStart, h.terms + 1),
      bodyStart: new Uint32Array(buffer, at.bodyStart, h.terms),
      df: new Uint32Array(buffer, at.df, h.terms),
      dict: dictBuf.toString('utf16le')
    }
    const ids = JSON.parse(idsBuf.toString('utf8')) as unknown
    const sigs = JSON.parse(sigsBuf.toString('utf8')) as unknown
    if (!isStrings(ids, h.docs) || !isStrings(sigs, h.docs) || !wellFormed(table, h.postingsBytes, ids)) return null
    const layout: SegmentFileLayout = { arrays: start, at, arraysBytes: h.arraysBytes, dictBytes: h.dictBytes, terms: h.terms }
    const small = SegmentFile.isSmall(layout)
    // A small segment keeps nothing but its body lengths (copied off the arrays buffer).
    const bodyLen = small ? new Uint16Array(buffer.slice(at.bodyLen, at.bodyLen + h.docs * 2)) : new Uint16Array(buffer, at.bodyLen, h.docs)
    const source = new SegmentFile(this.file, identityOf(st), layout, small ? null : table)
    return { segment: new SearchSegment(null, source, bodyLen), ids, sigs }
  }

  /**
   * Writes the segment atomically (temp file, fsync, rename, directory fsync).
   * @param persisted the segment, its ids and signatures
   * @param build a token of this build, recorded in the header (see `read`)
   * @param beforeRename called once the content is written, before the fsync and rename (may throw or exit)
   * @returns the written file as a source of the segment's terms and postings (from then on, the
   *   segment need not keep them in memory)
   */
  async write (persisted: PersistedSegment, build?: string, beforeRename?: () => void): Promise<SegmentFile> {
    const s = persisted.segment
    const terms = s.df.length
    const layout = arraysLayout(terms, s.docs, s.postings.byteLength)
    const dict = Buffer.from(s.dict, 'utf16le')
    const ids = Buffer.from(JSON.stringify(persisted.ids), 'utf8')
    const sigs = Buffer.from(JSON.stringify(persisted.sigs), 'utf8')
    // The arrays region as parts (each array, then zeros up to a multiple of 8): written and
    // hashed one by one, never copied into one buffer (at 100,000 entries the arrays and the
    // whole file were 20 and 28 MB more of memory the process kept until a full collection).
    const parts: Uint8Array[] = []
    for (const array of [s.termStart, s.postStart, s.bodyStart, s.df, s.bodyLen, s.postings]) {
      parts.push(new Uint8Array(array.buffer, array.byteOffset, array.byteLength))
      if (array.byteLength % 8 !== 0) parts.push(new Uint8Array(8 - array.byteLength % 8))
    }
    parts.push(dict, ids, sigs)
    const hash = createHash('sha256')
    for (const part of parts) hash.update(part)
    const header: Header = {
      ...(build !== undefined ? { build } : {}),
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
      sha256: hash.digest('hex')
    }
    const headerBuf = Buffer.from(JSON.stringify(header), 'utf8')
    const prefix = Buffer.alloc(pad8(PREFIX_BYTES + headerBuf.byteLength) - headerBuf.byteLength)
    MAGIC.copy(prefix, 0)
    prefix.writeUInt32LE(headerBuf.byteLength, 8)
    // The header after the 16-byte prefix, then the zero padding up to 8.
    const head = Buffer.concat([prefix.subarray(0, PREFIX_BYTES), headerBuf, prefix.subarray(PREFIX_BYTES)])
    const size = await writePartsAtomic(this.file, [head, ...parts], beforeRename)
    // The file just renamed into place (nothing else writes here: the instance lock).
    const handle = await open(this.file, 'r')
    let st
    try {
      st = await handle.stat()
    } finally {
      await handle.close()
    }
    if (st.size !== size) throw new Error(`${this.file} changed while written`)
    const fileLayout: SegmentFileLayout = { arrays: head.byteLength, at: layout.at, arraysBytes: layout.total, dictBytes: dict.byteLength, terms }
    const table = { dict: s.dict, termStart: s.termStart, postStart: s.postStart, bodyStart: s.bodyStart, df: s.df }
    return new SegmentFile(this.file, identityOf(st), fileLayout, SegmentFile.isSmall(fileLayout) ? null : table)
  }
}

/**
 * Writes a file's content given as parts atomically (see `writeFileInStepsAtomic`).
 * @returns the file's size
 */
async function writePartsAtomic (file: string, parts: Uint8Array[], beforeRename?: () => void): Promise<number> {
  let size = 0
  await writeFileInStepsAtomic(file, fd => {
    for (const part of parts) {
      for (let at = 0; at < part.byteLength;) at += writeSync(fd, part, at, part.byteLength - at)
      size += part.byteLength
    }
    beforeRename?.()
  })
  return size
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

async function readFully (handle: FileHandle, into: Uint8Array, position: number): Promise<number> {
  let done = 0
  while (done < into.byteLength) {
    const { bytesRead } = await handle.read(into, done, into.byteLength - done, position + done)
    if (bytesRead === 0) break
    done += bytesRead
  }
  return done
}

/** The offsets ascend and end where their arrays end; the ids are sorted and distinct. */
function wellFormed (s: TermTable, postingsBytes: number, ids: string[]): boolean {
  const terms = s.df.length
  if (s.termStart[0] !== 0 || s.termStart[terms] !== s.dict.length || s.postStart[0] !== 0 || s.postStart[terms] !== postingsBytes) return false
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
  return (o.build === undefined || typeof o.build === 'string') && typeof o.format === 'number' && typeof o.key === 'string' && typeof o.repo === 'string' && typeof o.sha256 === 'string' &&
    ['docs', 'terms', 'dictChars', 'postingsBytes', 'arraysBytes', 'dictBytes', 'idsBytes', 'sigsBytes'].every(k => count(o[k]))
}
