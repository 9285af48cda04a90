/**
 * A persisted full-text segment (search-snapshot.ts) read by each search from its file instead of
 * being held in memory: the postings of a big segment (18 MB at 100,000 entries), and every term
 * array of a small one (a thousand collections of 100 entries held 70 MB of them). Each search
 * opens the file, checks it is still the very file that was checked when loaded or written (device,
 * inode, size, mtime and ctime: the service replaces it only by renaming a new file over it), reads
 * what it needs with positioned reads (from the page cache, not this process's memory) and closes
 * it; no descriptor is held between searches (a thousand collections would hold a thousand). A
 * file that changed or went away raises `SegmentFileChanged`: the collection's search then builds
 * its index afresh (collection-search.ts), never answers from another file's postings.
 */
import { closeSync, fstatSync, openSync, readSync, type Stats } from 'node:fs'
import type { SegmentSource, SegmentView, TermTable } from './search-segment.js'

/**
 * A segment whose term arrays, dictionary and postings together take at most this many bytes is
 * read whole by each search (one read of this size from the page cache, ~20-40 µs) and keeps
 * nothing in memory; a bigger one keeps its term arrays and dictionary and reads postings only.
 */
export const SMALL_SEGMENT_BYTES = 256 * 1024

/** Postings bytes one read of a big segment takes at most (unless one term's postings are longer). */
const POSTINGS_CHUNK_BYTES = 256 * 1024

/** Raised by a search when the segment's file is no longer the one checked (changed, replaced, gone, cut short). */
export class SegmentFileChanged extends Error {
  /** @param file the segment's file */
  constructor (readonly file: string) {
    super(`full-text segment ${file} changed`)
    this.name = 'SegmentFileChanged'
  }
}

/** What identifies the file's content as the one checked. */
export interface FileIdentity {
  dev: number
  ino: number
  size: number
  mtimeMs: number
  ctimeMs: number
}

/**
 * A file's identity from its stats.
 * @param st the stats of an open file
 * @returns its identity
 */
export function identityOf (st: Stats): FileIdentity {
  return { dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs }
}

/** Where a segment's parts are in its file (absolute offsets, each a multiple of 8 from `arrays`). */
export interface SegmentFileLayout {
  /** Where the arrays region starts (termStart first). */
  arrays: number
  /** Offsets of each array, relative to `arrays`. */
  at: { termStart: number, postStart: number, bodyStart: number, df: number, postings: number }
  /** Bytes of the arrays region (padded). */
  arraysBytes: number
  /** Bytes of the dictionary (UTF-16LE), right after the arrays region. */
  dictBytes: number
  terms: number
}

/** One buffer for every search's reads: searches run one at a time, each within one synchronous step. */
let scratch = Buffer.allocUnsafeSlow(0)

function scratchOf (bytes: number): Buffer {
  // Its own ArrayBuffer at offset 0: the term arrays are views of it, 4-byte aligned.
  if (scratch.byteLength < bytes) scratch = Buffer.allocUnsafeSlow(Math.max(bytes, 64 * 1024))
  return scratch
}

/** A persisted segment's terms and postings, read from the file by each search. */
export class SegmentFile implements SegmentSource {
  readonly #file: string
  readonly #identity: FileIdentity
  readonly #layout: SegmentFileLayout
  /** A big segment's term arrays and dictionary (null: small, read whole each time). */
  readonly #resident: TermTable | null

  /**
   * @param file the segment's file
   * @param identity its identity as checked
   * @param layout where its parts are
   * @param resident the term arrays and dictionary of a big segment (null for a small one)
   */
  constructor (file: string, identity: FileIdentity, layout: SegmentFileLayout, resident: TermTable | null) {
    this.#file = file
    this.#identity = identity
    this.#layout = layout
    this.#resident = resident
  }

  /**
   * Whether a segment of this layout is read whole by each search.
   * @param layout the layout
   * @returns true when small
   */
  static isSmall (layout: SegmentFileLayout): boolean {
    return layout.arraysBytes + layout.dictBytes <= SMALL_SEGMENT_BYTES
  }

  /** Bytes kept in this process (a big segment's term arrays and dictionary). */
  get bytes (): number {
    const r = this.#resident
    return r === null ? 0 : r.dict.length + r.termStart.byteLength + r.postStart.byteLength + r.bodyStart.byteLength + r.df.byteLength
  }

  /**
   * Opens the file for one search.
   * @returns the view
   */
  open (): SegmentView {
    let fd: number
    try {
      fd = openSync(this.#file, 'r')
    } catch {
      throw new SegmentFileChanged(this.#file)
    }
    try {
      if (!sameIdentity(identityOf(fstatSync(fd)), this.#identity)) throw new SegmentFileChanged(this.#file)
      return this.#resident === null ? this.#readWhole(fd) : this.#viewOf(fd, this.#resident)
    } catch (err) {
      closeSync(fd)
      throw err instanceof SegmentFileChanged ? err : new SegmentFileChanged(this.#file)
    }
  }

  /** A small segment: its arrays and dictionary in one read, the file closed at once. */
  #readWhole (fd: number): SegmentView {
    const { arrays, at, arraysBytes, dictBytes, terms } = this.#layout
    const bytes = scratchOf(arraysBytes + dictBytes)
    this.#readFully(fd, bytes, arraysBytes + dictBytes, arrays)
    closeSync(fd)
    const buffer = bytes.buffer
    const postings = new Uint8Array(buffer, at.postings, arraysBytes - at.postings)
    return {
      dict: bytes.toString('utf16le', arraysBytes, arraysBytes + dictBytes),
      termStart: new Uint32Array(buffer, at.termStart, terms + 1),
      postStart: new Uint32Array(buffer, at.postStart, terms + 1),
      bodyStart: new Uint32Array(buffer, at.bodyStart, terms),
      df: new Uint32Array(buffer, at.df, terms),
      postings: (from, to) => postings.subarray(from, to),
      chunk: Infinity,
      close: () => {}
    }
  }

  /** A big segment: the kept term arrays, postings read on demand, closed by `close`. */
  #viewOf (fd: number, table: TermTable): SegmentView {
    const start = this.#layout.arrays + this.#layout.at.postings
    let open = true
    return {
      ...table,
      postings: (from, to) => {
        const bytes = scratchOf(to - from)
        this.#readFully(fd, bytes, to - from, start + from)
        return bytes.subarray(0, to - from)
      },
      chunk: POSTINGS_CHUNK_BYTES,
      close: () => { if (open) { open = false; closeSync(fd) } }
    }
  }

  #readFully (fd: number, into: Buffer, length: number, position: number): void {
    let done = 0
    while (done < length) {
      const n = readSync(fd, into, done, length - done, position + done)
      if (n === 0) throw new SegmentFileChanged(this.#file)
      done += n
    }
  }
}

function sameIdentity (a: FileIdentity, b: FileIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs
}
