/**
 * The persisted rows of one collection as one buffer (issue 18, restart): a binary layout that a
 * restart indexes without parsing any row. Each record holds what the restart needs to trust a row
 * (the id, a hash of it, the file's signature, the sort key, the file when it is not the id's
 * default one) and the rest of the row (fields, body start, validation issues, a title that is not
 * derived) as a JSON payload that is parsed only when the row is first used (`StoredRow`). So a
 * restart over 100,000 entries allocates a few large objects instead of several small ones per row
 * (garbage collection was a quarter of that restart), and an untouched row costs its bytes here
 * and one small object.
 *
 * Layout (little-endian): `MAGIC`, u32 format, u32 key length, the key (ASCII); then per row a
 * record: u32 record length, u32 id hash, f64 order, u8 flags (1: has an order), u8 signature
 * length, u16 id length, u16 file length, u32 revision, then the id (UTF-8), the signature
 * (ASCII), the file (UTF-8, absent when it is the id's default one) and the JSON payload; then the
 * carried text (UTF-8, may be empty: what the writer adds about the table as a whole, see
 * `carried`); then the end: u32 0, u32 row count, u32 carried text length, u32 CRC-32 of every byte
 * before it. Anything that does not add up (magic, format, key, lengths, count, checksum, a
 * duplicate id) makes the whole table untrusted.
 */
import { closeSync, readSync } from 'node:fs'
import { crc32 } from 'node:zlib'
import type { EntryData } from '../content/formats.js'
import type { ValidationIssue } from '../errors.js'
import { titlesOf } from '../content/entry-search.js'
import type { RowContent, RowSource } from './index-row.js'
import { fileAt, idAt, RECORD_HEAD } from './record-file.js'

/** The first bytes of a row table file. */
const MAGIC = Buffer.from('GCMSROWS', 'latin1')
/** Where a record's revision is (u32). */
const REV_AT = 22
const END_BYTES = 16
const HAS_ORDER = 1
/** From this size on, `release` lets go of a table's bytes (below it, an open file costs more). */
const RELEASE_MIN_BYTES = 256 * 1024

/** Closes a table's file when the table is collected without `release` having closed it. */
const FILES = new FinalizationRegistry<number>(fd => { try { closeSync(fd) } catch {} })

function sigAt (buf: Buffer, start: number): string {
  const from = start + RECORD_HEAD + buf.readUInt16LE(start + 18)
  return buf.toString('latin1', from, from + buf[start + 17]!)
}

function orderAt (buf: Buffer, start: number): number | null {
  return (buf[start + 16]! & HAS_ORDER) !== 0 ? buf.readDoubleLE(start + 8) : null
}

function payloadAt (buf: Buffer, start: number): Buffer {
  const from = start + RECORD_HEAD + buf.readUInt16LE(start + 18) + buf[start + 17]! + buf.readUInt16LE(start + 20)
  return buf.subarray(from, start + buf.readUInt32LE(start))
}

/** Reads exactly `length` bytes at `position` (a short read of a regular file means it shrank). */
function readFully (fd: number, target: Buffer, offset: number, length: number, position: number): void {
  for (let done = 0; done < length;) {
    const n = readSync(fd, target, offset + done, length - done, position + done)
    if (n === 0) throw new Error('row table file shrank')
    done += n
  }
}

/** What a record's JSON payload holds (short keys: it is written for every row). */
interface Payload {
  /** Fields (a Markdown body left out when `b` is set). */
  f: EntryData
  /** Where the Markdown body starts. */
  b?: number
  v?: ValidationIssue[]
  /** The title, when it is not the one the fields give. */
  t?: string
}

/** A row as it goes into a record. */
export interface RecordRow {
  id: string
  /** The entry's revision (0 when the writer does not know it: a worker's table). */
  rev?: number
  sig: string
  order: number | null
  /** Absolute path, or null when it is the id's default file. */
  file: string | null
  content: RowContent | null
}

/**
 * A 32-bit hash of an id's UTF-16 code units (FNV-1a), stored in its record so a restart finds
 * rows by id without decoding any.
 * @param id entry id
 * @returns unsigned 32-bit hash
 */
export function idHash (id: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193)
  return h >>> 0
}

/** A row table's records, found by id; the rows' content is parsed per record on demand. */
export class RowTable implements RowSource {
  #buf: Buffer | null
  /** The file the table was read from, open while rows may need its records (-1: none). */
  #fd = -1
  readonly #recordsEnd: number
  /** After `release`: every record's signature, and where each starts. */
  #sigs: Buffer | null = null
  #sigStarts: Int32Array | null = null
  readonly #starts: Int32Array
  readonly #hashes: Uint32Array
  readonly #slots: Int32Array
  readonly #titleField: string | null
  /** The carried text (see `carried`). */
  readonly #carried: string

  private constructor (buf: Buffer, starts: Int32Array, hashes: Uint32Array, titleField: string | null, recordsEnd: number, carried: string) {
    this.#buf = buf
    this.#carried = carried
    this.#recordsEnd = recordsEnd
    this.#starts = starts
    this.#hashes = hashes
    this.#titleField = titleField
    let capacity = 16
    while (capacity < starts.length * 2) capacity *= 2
    this.#slots = new Int32Array(capacity)
  }

  /**
   * Reads a table from a file's bytes.
   * @param buf the whole file
   * @param format the format it must have
   * @param key the key it must have
   * @param titleField the collection's title field (a payload without a title derives it)
   * @param fd the file the bytes were read from, left open for `release` (closed when refused)
   * @returns the table, or null when anything is in doubt
   */
  static parse (buf: Buffer, format: number, key: string, titleField: string | null, fd = -1): RowTable | null {
    const table = RowTable.#parse(buf, format, key, titleField)
    if (fd >= 0) {
      if (table === null) {
        try { closeSync(fd) } catch {}
      } else {
        table.#fd = fd
        FILES.register(table, fd, table)
      }
    }
    return table
  }

  static #parse (buf: Buffer, format: number, key: string, titleField: string | null): RowTable | null {
    const head = MAGIC.length + 8
    if (buf.length < head + END_BYTES || !buf.subarray(0, MAGIC.length).equals(MAGIC)) return null
    if (buf.readUInt32LE(MAGIC.length) !== format) return null
    const keyLength = buf.readUInt32LE(MAGIC.length + 4)
    if (head + keyLength + END_BYTES > buf.length || buf.toString('latin1', head, head + keyLength) !== key) return null
    const tail = buf.length - END_BYTES
    if (buf.readUInt32LE(tail) !== 0 || crc32(buf.subarray(0, tail + 12)) !== buf.readUInt32LE(tail + 12)) return null
    const count = buf.readUInt32LE(tail + 4)
    const carriedLength = buf.readUInt32LE(tail + 8)
    if (carriedLength > tail - head - keyLength) return null
    // The records end where the carried text starts.
    const end = tail - carriedLength
    // Each record takes more than RECORD_HEAD bytes: a count the bytes cannot hold is a lie.
    if (count > (end - head - keyLength) / RECORD_HEAD) return null
    const starts = new Int32Array(count)
    const hashes = new Uint32Array(count)
    let at = head + keyLength
    for (let i = 0; i < count; i++) {
      if (at + RECORD_HEAD > end) return null
      const length = buf.readUInt32LE(at)
      const fixed = RECORD_HEAD + buf[at + 17]! + buf.readUInt16LE(at + 18) + buf.readUInt16LE(at + 20)
      if (length < fixed || at + length > end) return null
      starts[i] = at
      hashes[i] = buf.readUInt32LE(at + 4)
      at += length
    }
    if (at !== end) return null
    const table = new RowTable(buf, starts, hashes, titleField, end, buf.toString('utf8', end, tail))
    return table.#fillSlots() ? table : null
  }

  /** How many rows the table holds. */
  get size (): number {
    return this.#starts.length
  }

  /**
   * The record of an id.
   * @param id entry id
   * @returns its record number, or -1
   */
  find (id: string): number {
    const h = idHash(id)
    const mask = this.#slots.length - 1
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const v = this.#slots[slot]!
      if (v === 0) return -1
      if (this.#hashes[v - 1] === h && this.#idEquals(v - 1, id)) return v - 1
    }
  }

  /**
   * What the writer carried beside the rows (`RowTableWriter.end`), '' when nothing.
   * @returns the text
   */
  get carried (): string {
    return this.#carried
  }

  /**
   * Every record's id, in record order (one decode per record, before `release`).
   * @returns the ids
   */
  ids (): string[] {
    const ids = new Array<string>(this.#starts.length)
    for (let at = 0; at < ids.length; at++) ids[at] = this.id(at)
    return ids
  }

  /**
   * A copy of every record's bytes in shared memory, for a stat pass in another thread
   * (`PackedFiles` in `stat-files.ts`): one copy instead of a string per record here (before
   * `release`). Walked with `recordFileAt` (`record-file.ts`).
   * @returns the records, back to back
   */
  sharedRecords (): SharedArrayBuffer {
    const buf = this.#buf
    if (buf === null) throw new Error('row table released')
    const from = this.#starts.length > 0 ? this.#starts[0]! : this.#recordsEnd
    const shared = new SharedArrayBuffer(this.#recordsEnd - from)
    buf.copy(new Uint8Array(shared), 0, from, this.#recordsEnd)
    return shared
  }

  /**
   * A record's revision.
   * @param at record number
   * @returns the revision written with it
   */
  rev (at: number): number {
    return this.#buf !== null ? this.#buf.readUInt32LE(this.#starts[at]! + REV_AT) : this.#read(at).readUInt32LE(REV_AT)
  }

  /**
   * Whether a record's signature is this one (no string is built).
   * @param at record number
   * @param sig a file signature
   * @returns true when equal
   */
  sigEquals (at: number, sig: string): boolean {
    if (this.#buf === null) return this.sig(at) === sig
    const buf = this.#buf
    const start = this.#starts[at]!
    const length = buf[start + 17]!
    if (length !== sig.length) return false
    const from = start + RECORD_HEAD + buf.readUInt16LE(start + 18)
    for (let i = 0; i < length; i++) if (buf[from + i] !== sig.charCodeAt(i)) return false
    return true
  }

  /**
   * A record's id.
   * @param at record number
   * @returns the id
   */
  id (at: number): string {
    return this.#buf !== null ? idAt(this.#buf, this.#starts[at]!) : idAt(this.#read(at), 0)
  }

  /**
   * A record's signature.
   * @param at record number
   * @returns the signature string
   */
  sig (at: number): string {
    if (this.#buf !== null) return sigAt(this.#buf, this.#starts[at]!)
    const sigs = this.#sigs as Buffer
    return sigs.toString('latin1', (this.#sigStarts as Int32Array)[at]!, (this.#sigStarts as Int32Array)[at + 1]!)
  }

  /**
   * A record's sort key.
   * @param at record number
   * @returns the order field's number, or null
   */
  order (at: number): number | null {
    return this.#buf !== null ? orderAt(this.#buf, this.#starts[at]!) : orderAt(this.#read(at), 0)
  }

  /**
   * A record's file, when it is not the id's default one.
   * @param at record number
   * @returns absolute path, or null
   */
  file (at: number): string | null {
    return this.#buf !== null ? fileAt(this.#buf, this.#starts[at]!) : fileAt(this.#read(at), 0)
  }

  /**
   * A record's length in bytes.
   * @param at record number
   * @returns its length
   */
  recordLength (at: number): number {
    return (at + 1 < this.#starts.length ? this.#starts[at + 1]! : this.#recordsEnd) - this.#starts[at]!
  }

  /**
   * Copies a record's bytes (a rewrite copies an unchanged row without parsing it).
   * @param at record number
   * @param target where to
   * @param offset at which byte
   */
  copyRecord (at: number, target: Buffer, offset: number): void {
    const start = this.#starts[at]!
    const length = this.recordLength(at)
    if (this.#buf !== null) this.#buf.copy(target, offset, start, start + length)
    else readFully(this.#fd, target, offset, length, start)
  }

  /**
   * A record's content, parsed (the row keeps it: called once per row at most).
   * @param at record number
   * @param id the row's id (a row without title fields is titled by it)
   * @returns the content
   */
  content (at: number, id: string): RowContent {
    const buf = this.#buf ?? this.#read(at)
    const start = this.#buf !== null ? this.#starts[at]! : 0
    const p = JSON.parse(payloadAt(buf, start).toString()) as Payload
    if (typeof p !== 'object' || p === null || typeof p.f !== 'object' || p.f === null) throw new Error('malformed row payload')
    const content: RowContent = { fields: p.f, title: p.t ?? titlesOf(p.f, this.#titleField)[0] ?? id, order: orderAt(buf, start) }
    if (p.b !== undefined) content.bodyAt = p.b
    if (p.v !== undefined) content.validationIssues = p.v
    return content
  }

  /**
   * Lets go of the file's bytes once the restart has taken its rows (`find`, `sigEquals` need
   * them): a large table keeps only its record offsets and signatures in memory and reads a record
   * from the file (still open: the very file it was read from, whatever replaced it since) when a
   * row is first used or copied. The page cache holds the file, not this process. A small table,
   * or one without its file, keeps its bytes.
   */
  release (): void {
    const fd = this.#fd
    if (this.#buf === null || fd < 0) return
    if (this.#buf.length < RELEASE_MIN_BYTES) {
      this.#closeFile()
      return
    }
    const starts = new Int32Array(this.#starts.length + 1)
    let bytes = 0
    for (let at = 0; at < this.#starts.length; at++) { starts[at] = bytes; bytes += this.#buf[this.#starts[at]! + 17]! }
    starts[this.#starts.length] = bytes
    const sigs = Buffer.allocUnsafeSlow(bytes)
    const buf = this.#buf
    // Byte by byte: a copy call per record costs more than its ~50 bytes.
    for (let at = 0; at < this.#starts.length; at++) {
      const start = this.#starts[at]!
      const from = start + RECORD_HEAD + buf.readUInt16LE(start + 18)
      const to = starts[at]!
      const length = buf[start + 17]!
      for (let i = 0; i < length; i++) sigs[to + i] = buf[from + i]!
    }
    this.#sigs = sigs
    this.#sigStarts = starts
    this.#buf = null
  }

  /** The bytes of one record, read from the file (after `release`). */
  #read (at: number): Buffer {
    const length = this.recordLength(at)
    const record = Buffer.allocUnsafe(length)
    readFully(this.#fd, record, 0, length, this.#starts[at]!)
    return record
  }

  #closeFile (): void {
    if (this.#fd < 0) return
    FILES.unregister(this)
    try { closeSync(this.#fd) } catch {}
    this.#fd = -1
  }

  #idEquals (at: number, id: string): boolean {
    if (this.#buf === null) return this.id(at) === id
    const buf = this.#buf
    const start = this.#starts[at]!
    const length = buf.readUInt16LE(start + 18)
    const from = start + RECORD_HEAD
    if (length === id.length) {
      let i = 0
      for (; i < length; i++) {
        const byte = buf[from + i]!
        if (byte >= 0x80) break
        if (byte !== id.charCodeAt(i)) return false
      }
      if (i === length) return true
    }
    // Not ASCII: compare the decoded text.
    return length >= id.length && buf.toString('utf8', from, from + length) === id
  }

  /** Puts every record in the hash table; false on a duplicate id. */
  #fillSlots (): boolean {
    const mask = this.#slots.length - 1
    for (let at = 0; at < this.#starts.length; at++) {
      const h = this.#hashes[at]!
      let slot = h & mask
      for (; this.#slots[slot] !== 0; slot = (slot + 1) & mask) {
        const other = this.#slots[slot]! - 1
        if (this.#hashes[other] === h && this.#sameId(other, at)) return false
      }
      this.#slots[slot] = at + 1
    }
    return true
  }

  /** Whether two records have the same id (at parse, before any `release`). */
  #sameId (a: number, b: number): boolean {
    const buf = this.#buf as Buffer
    const sa = this.#starts[a]!
    const sb = this.#starts[b]!
    const la = buf.readUInt16LE(sa + 18)
    return la === buf.readUInt16LE(sb + 18) && buf.compare(buf, sa + RECORD_HEAD, sa + RECORD_HEAD + la, sb + RECORD_HEAD, sb + RECORD_HEAD + la) === 0
  }
}

/** Marks a value that JSON would change (never in real data: it holds a NUL). */
const NOT_JSON = '\u0000not-json'
const NOT_JSON_TEXT = JSON.stringify(NOT_JSON).slice(1, -1)

/**
 * Value as JSON text, when JSON carries it exactly.
 * @param value a row or a row's payload
 * @returns its JSON text, or null when it holds a number JSON cannot carry (NaN, Infinity, -0)
 */
export function exactJson (value: unknown): string | null {
  const text = JSON.stringify(value, jsonExact)
  return text.includes(NOT_JSON_TEXT) ? null : text
}

function jsonExact (_key: string, value: unknown): unknown {
  return typeof value === 'number' && (!Number.isFinite(value) || Object.is(value, -0)) ? NOT_JSON : value
}

/** Writes a row table a chunk at a time, with its checksum. */
export class RowTableWriter {
  #chunk: Buffer
  #used = 0
  #crc = 0
  #count = 0
  readonly #flush: (bytes: Buffer) => void
  readonly #titleField: string | null

  /**
   * @param format the format number written
   * @param key the key written
   * @param titleField the collection's title field (a title it gives is left out of the payload)
   * @param flush takes each full chunk (the buffer is reused after it returns)
   * @param chunkBytes chunk size
   */
  constructor (format: number, key: string, titleField: string | null, flush: (bytes: Buffer) => void, chunkBytes = 1024 * 1024) {
    this.#flush = flush
    this.#titleField = titleField
    this.#chunk = Buffer.allocUnsafe(chunkBytes)
    const keyLength = Buffer.byteLength(key, 'latin1')
    const at = this.#reserve(MAGIC.length + 8 + keyLength)
    MAGIC.copy(this.#chunk, at)
    this.#chunk.writeUInt32LE(format, at + MAGIC.length)
    this.#chunk.writeUInt32LE(keyLength, at + MAGIC.length + 4)
    this.#chunk.write(key, at + MAGIC.length + 8, 'latin1')
  }

  /** Rows written so far. */
  get count (): number {
    return this.#count
  }

  /**
   * Adds a row.
   * @param row the row
   * @returns false when it was left out (data JSON cannot carry exactly, or lengths out of range)
   */
  add (row: RecordRow): boolean {
    const c = row.content
    if (c === null) return false
    const p: Payload = { f: c.fields }
    if (c.bodyAt !== undefined) p.b = c.bodyAt
    if (c.validationIssues !== undefined) p.v = c.validationIssues
    if (c.title !== (titlesOf(c.fields, this.#titleField)[0] ?? row.id)) p.t = c.title
    const text = exactJson(p)
    if (text === null) return false
    if (row.order !== null && !Number.isFinite(row.order)) return false
    const idLength = Buffer.byteLength(row.id)
    const fileLength = row.file === null ? 0 : Buffer.byteLength(row.file)
    if (idLength > 0xffff || fileLength > 0xffff || row.sig.length > 0xff || /[^\x20-\x7e]/.test(row.sig)) return false
    const length = RECORD_HEAD + idLength + row.sig.length + fileLength + Buffer.byteLength(text)
    const start = this.#reserve(length)
    const chunk = this.#chunk
    chunk.writeUInt32LE(length, start)
    chunk.writeUInt32LE(idHash(row.id), start + 4)
    chunk.writeDoubleLE(row.order ?? 0, start + 8)
    chunk[start + 16] = row.order === null ? 0 : HAS_ORDER
    chunk[start + 17] = row.sig.length
    chunk.writeUInt16LE(idLength, start + 18)
    chunk.writeUInt16LE(fileLength, start + 20)
    chunk.writeUInt32LE(row.rev ?? 0, start + REV_AT)
    let at = start + RECORD_HEAD + chunk.write(row.id, start + RECORD_HEAD)
    at += chunk.write(row.sig, at, 'latin1')
    if (row.file !== null) at += chunk.write(row.file, at)
    chunk.write(text, at)
    this.#count++
    return true
  }

  /**
   * Adds a row that another table of the same collection holds unchanged, by copying its record.
   * @param table the table
   * @param at its record number there
   * @param rev the row's revision now (written over the copied one; the record's when omitted)
   */
  copy (table: RowTable, at: number, rev?: number): void {
    const length = table.recordLength(at)
    const offset = this.#reserve(length)
    table.copyRecord(at, this.#chunk, offset)
    if (rev !== undefined) this.#chunk.writeUInt32LE(rev, offset + REV_AT)
    this.#count++
  }

  /**
   * Writes the carried text, the end (count and checksum) and flushes what is left.
   * @param carried text the reader gets back as `RowTable.carried` (checksummed with the rows)
   */
  end (carried = ''): void {
    const text = Buffer.from(carried, 'utf8')
    const start = this.#reserve(text.length)
    text.copy(this.#chunk, start)
    const at = this.#reserve(END_BYTES)
    this.#chunk.writeUInt32LE(0, at)
    this.#chunk.writeUInt32LE(this.#count, at + 4)
    this.#chunk.writeUInt32LE(text.length, at + 8)
    this.#crc = crc32(this.#chunk.subarray(0, at + 12), this.#crc)
    this.#chunk.writeUInt32LE(this.#crc, at + 12)
    this.#flush(this.#chunk.subarray(0, this.#used))
    this.#used = 0
  }

  /** Room for `length` more bytes in the chunk (flushing it first when full); returns where. */
  #reserve (length: number): number {
    if (this.#used + length > this.#chunk.length) {
      if (this.#used > 0) {
        const full = this.#chunk.subarray(0, this.#used)
        this.#crc = crc32(full, this.#crc)
        this.#flush(full)
        this.#used = 0
      }
      // A record larger than a chunk gets a chunk of its own size.
      if (length > this.#chunk.length) this.#chunk = Buffer.allocUnsafe(length)
    }
    const at = this.#used
    this.#used += length
    return at
  }
}
