/**
 * Git's pack format (version 2) and pack index format (version 2), for the packs we write
 * ourselves: every object stored whole (no deltas), zlib-deflated, named by the pack's checksum.
 * See git's Documentation/gitformat-pack.txt. Pure functions over buffers; the files are handled by
 * PackStore.
 */
import { createHash } from 'node:crypto'
import { deflateSync, inflateSync, crc32 } from 'node:zlib'

/** An object type git stores in packs without a base. */
export type ObjectType = 'commit' | 'tree' | 'blob' | 'tag'

/** One object to pack: its id is the SHA-1 of `<type> <size>\0<content>`. */
export interface PackObject {
  oid: string
  type: ObjectType
  content: Buffer
  /** Its pack entry when already encoded (see `storedBlobEntryOf`; `content` is then a view into it). */
  entry?: Buffer
}

const TYPE_CODES: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3, tag: 4 }
const CODE_TYPES: Record<number, ObjectType> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' }
/** Type codes 6 and 7: objects stored as a delta against another one. */
const DELTA_CODES = new Set([6, 7])
const IDX_MAGIC = 0xff744f63
const LARGE_OFFSET = 0x80000000
/** Objects smaller than this are stored uncompressed (see storedZlibInto). */
export const STORE_BELOW = 4096
/** The most one stored block holds (a larger tree is deflated). */
const MAX_STORED = 65535

/** A file that is not a pack index we can read (another version, or truncated). */
export class PackIndexError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'PackIndexError'
  }
}

/** A built pack and its index, ready to be written. */
export interface BuiltPack {
  /** `pack-<checksum hex>`: the files are `<name>.pack` and `<name>.idx` */
  name: string
  pack: Buffer
  idx: Buffer
  /** The entries as packed (each object once), for a later merge without reading the files back. */
  entries: readonly PackEntry[]
}

/** One entry as stored in a pack: its header and deflated content, ready to be copied. */
export interface PackEntry {
  oid: string
  bytes: Buffer
}

/**
 * Encodes a whole object as a pack entry.
 * @param object the object
 * @returns the entry
 */
export function encodeEntry (object: PackObject): PackEntry {
  if (object.entry !== undefined) return { oid: object.oid, bytes: object.entry }
  const content = object.content
  // Trees are mostly SHA-1s, which do not compress: a collection's tree of 256 shards (7.7 KB) was
  // deflated at every history commit for nothing.
  const store = content.length < STORE_BELOW || (object.type === 'tree' && content.length <= MAX_STORED)
  const type = TYPE_CODES[object.type]
  if (!store) {
    const header = entryHeader(type, content.length)
    return { oid: object.oid, bytes: Buffer.concat([header, deflateSync(content, { level: 1 })]) }
  }
  // Header and stored stream written into one buffer (no separate stream to copy after the header).
  const headerLength = entryHeaderLength(content.length)
  const bytes = Buffer.allocUnsafe(headerLength + 2 + 5 + content.length + 4)
  writeEntryHeader(bytes, type, content.length)
  storedZlibInto(bytes, headerLength, content)
  return { oid: object.oid, bytes }
}

/**
 * A zlib stream holding the bytes uncompressed (RFC 1950 header, RFC 1951 stored blocks, Adler-32),
 * written at `at` (2 + 5 + content.length + 4 bytes). Small objects (trees, commits, short
 * documents) gain little from compression, and setting up a zlib compressor costs more than the
 * whole stored stream; `git gc` recompresses them anyway.
 */
function storedZlibInto (out: Buffer, at: number, content: Buffer): void {
  content.copy(out, at + 7)
  storedZlibAround(out, at, content.length)
}

/** Writes the stored zlib stream's header and checksum around `length` bytes already at `at + 7`. */
function storedZlibAround (out: Buffer, at: number, length: number): void {
  // One stored block holds at most MAX_STORED (65535) bytes; encodeEntry never stores more.
  out[at] = 0x78
  out[at + 1] = 0x01
  out[at + 2] = 1
  out.writeUInt16LE(length, at + 3)
  out.writeUInt16LE(~length & 0xffff, at + 5)
  out.writeUInt32BE(adler32(out.subarray(at + 7, at + 7 + length)), at + 7 + length)
}

/**
 * A blob's pack entry (stored: its UTF-8 bytes under STORE_BELOW) written straight from its text,
 * with a view of its content inside the entry: a history document is encoded once, into the entry,
 * not into a buffer of its own and then copied into the entry.
 * @param text the blob's text
 * @param size its UTF-8 length (less than STORE_BELOW)
 * @returns the entry's bytes and the content's view into them
 */
export function storedBlobEntryOf (text: string, size: number): { bytes: Buffer, content: Buffer } {
  if (size >= STORE_BELOW) throw new Error('A blob this large is deflated, not stored')
  const headerLength = entryHeaderLength(size)
  const bytes = Buffer.allocUnsafe(headerLength + 2 + 5 + size + 4)
  writeEntryHeader(bytes, TYPE_CODES.blob, size)
  if (bytes.write(text, headerLength + 7, size, 'utf8') !== size) throw new Error('The blob text is not as long as its given size')
  storedZlibAround(bytes, headerLength, size)
  return { bytes, content: bytes.subarray(headerLength + 7, headerLength + 7 + size) }
}

function adler32 (data: Buffer): number {
  let a = 1
  let b = 0
  for (let i = 0; i < data.length;) {
    // 5552 bytes is the most that can be summed before the sums need reducing (zlib's NMAX).
    const end = Math.min(data.length, i + 5552)
    for (; i < end; i++) {
      a += data[i]!
      b += a
    }
    a %= 65521
    b %= 65521
  }
  return ((b << 16) | a) >>> 0
}

/**
 * Builds a pack and its index from whole objects (duplicates are packed once).
 * @param objects the objects
 * @returns the pack, its index and its name
 */
export function buildPack (objects: readonly PackObject[]): BuiltPack {
  return packOf([...new Map(objects.map(o => [o.oid, o])).values()].map(encodeEntry))
}

/**
 * Builds a pack and its index from encoded entries, copied as they are (duplicates packed once).
 * @param entries the entries (none may be a delta: their bases are addressed by offset)
 * @returns the pack, its index and its name
 */
export function buildPackOf (entries: readonly PackEntry[]): BuiltPack {
  return packOf([...new Map(entries.map(e => [e.oid, e])).values()])
}

/** The pack of distinct entries: written into one buffer (header, entries, checksum), hashed in place. */
function packOf (unique: readonly PackEntry[]): BuiltPack {
  let size = 12
  for (const e of unique) size += e.bytes.length
  const pack = Buffer.allocUnsafe(size + 20)
  pack.write('PACK', 0, 'latin1')
  pack.writeUInt32BE(2, 4)
  pack.writeUInt32BE(unique.length, 8)
  let offset = 12
  const indexed = unique.map((e) => {
    e.bytes.copy(pack, offset)
    const entry = { oid: Buffer.from(e.oid, 'hex'), offset, crc: crc32(e.bytes) }
    offset += e.bytes.length
    return entry
  })
  const checksum = createHash('sha1').update(pack.subarray(0, size)).digest()
  checksum.copy(pack, size)
  indexed.sort((a, b) => Buffer.compare(a.oid, b.oid))
  return { name: `pack-${checksum.toString('hex')}`, pack, idx: buildIndex(indexed, checksum), entries: unique }
}

/** How many bytes `entryHeader` writes for an object of `size` bytes. */
function entryHeaderLength (size: number): number {
  let n = 1
  for (let rest = Math.floor(size / 16); rest > 0; rest = Math.floor(rest / 128)) n++
  return n
}

/** Writes `entryHeader`'s bytes at the start of `out`. */
function writeEntryHeader (out: Buffer, type: number, size: number): void {
  let at = 0
  let byte = (type << 4) | (size & 0x0f)
  let rest = Math.floor(size / 16)
  while (rest > 0) {
    out[at++] = byte | 0x80
    byte = rest & 0x7f
    rest = Math.floor(rest / 128)
  }
  out[at] = byte
}

/** `<type, size>` as git writes it: 3 type bits and 4 size bits, then 7 size bits per byte. */
function entryHeader (type: number, size: number): Buffer {
  const out = Buffer.allocUnsafe(entryHeaderLength(size))
  writeEntryHeader(out, type, size)
  return out
}

function buildIndex (entries: Array<{ oid: Buffer, offset: number, crc: number }>, packChecksum: Buffer): Buffer {
  const n = entries.length
  const large = entries.filter(e => e.offset >= LARGE_OFFSET)
  const buf = Buffer.alloc(8 + 1024 + n * 28 + large.length * 8 + 40)
  buf.writeUInt32BE(IDX_MAGIC, 0)
  buf.writeUInt32BE(2, 4)
  const fanout = new Uint32Array(256)
  for (const e of entries) fanout[e.oid[0]!]!++
  let total = 0
  for (let i = 0; i < 256; i++) {
    total += fanout[i]!
    buf.writeUInt32BE(total, 8 + i * 4)
  }
  let at = 8 + 1024
  for (const e of entries) { e.oid.copy(buf, at); at += 20 }
  for (const e of entries) { buf.writeUInt32BE(e.crc, at); at += 4 }
  let largeIndex = 0
  for (const e of entries) {
    buf.writeUInt32BE(e.offset >= LARGE_OFFSET ? (LARGE_OFFSET | largeIndex++) >>> 0 : e.offset, at)
    at += 4
  }
  for (const e of large) { buf.writeBigUInt64BE(BigInt(e.offset), at); at += 8 }
  packChecksum.copy(buf, at)
  at += 20
  createHash('sha1').update(buf.subarray(0, at)).digest().copy(buf, at)
  return buf
}

/** A parsed pack index: sorted object ids and their offsets in the pack. */
export class PackIndex {
  readonly count: number
  private readonly buf: Buffer
  private readonly fanout: Uint32Array
  private readonly oidsAt: number
  private readonly offsetsAt: number
  private readonly largeAt: number
  /** Every entry's offset, ascending: an entry ends where the next one starts. */
  private sortedOffsets: Float64Array | null = null

  /** @param buf the `.idx` file's bytes (throws when it is not a version 2 index) */
  constructor (buf: Buffer) {
    if (buf.length < 8 + 1024 + 40 || buf.readUInt32BE(0) !== IDX_MAGIC || buf.readUInt32BE(4) !== 2) {
      throw new PackIndexError('Not a version 2 pack index')
    }
    this.buf = buf
    this.fanout = new Uint32Array(256)
    for (let i = 0; i < 256; i++) this.fanout[i] = buf.readUInt32BE(8 + i * 4)
    this.count = this.fanout[255]!
    this.oidsAt = 8 + 1024
    this.offsetsAt = this.oidsAt + this.count * 24
    this.largeAt = this.offsetsAt + this.count * 4
    if (buf.length < this.largeAt + 40) throw new PackIndexError('Truncated pack index')
  }

  /**
   * Where an object starts in the pack.
   * @param oid 40-hex object id, or its 20 bytes
   * @returns its offset, or -1 when the pack does not hold it
   */
  offsetOf (oid: string | Buffer): number {
    // A caller looking one id up in many packs converts it once (`Buffer.from(oid, 'hex')`).
    const key = typeof oid === 'string' ? Buffer.from(oid, 'hex') : oid
    let lo = key[0] === 0 ? 0 : this.fanout[key[0]! - 1]!
    let hi = this.fanout[key[0]!]!
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const at = this.oidsAt + mid * 20
      const cmp = this.buf.compare(key, 0, 20, at, at + 20)
      if (cmp === 0) return this.offsetAt(mid)
      if (cmp > 0) hi = mid
      else lo = mid + 1
    }
    return -1
  }

  /**
   * Where the entry starting at `offset` ends: the next entry's start, or the checksum's.
   * @param offset an entry's offset
   * @param packSize the pack file's size
   * @returns the end offset
   */
  endOf (offset: number, packSize: number): number {
    this.sortedOffsets ??= Float64Array.from({ length: this.count }, (_, i) => this.offsetAt(i)).sort()
    const sorted = this.sortedOffsets
    let lo = 0
    let hi = sorted.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (sorted[mid]! <= offset) lo = mid + 1
      else hi = mid
    }
    return lo < sorted.length ? sorted[lo]! : packSize - 20
  }

  /**
   * Every object id of the index.
   * @returns 40-hex ids in index order
   */
  oids (): string[] {
    return Array.from({ length: this.count }, (_, i) => this.buf.toString('hex', this.oidsAt + i * 20, this.oidsAt + i * 20 + 20))
  }

  private offsetAt (i: number): number {
    const small = this.buf.readUInt32BE(this.offsetsAt + i * 4)
    if ((small & LARGE_OFFSET) === 0) return small
    return Number(this.buf.readBigUInt64BE(this.largeAt + (small & 0x7fffffff) * 8))
  }
}

/**
 * The entries of a pack, as stored (for copying into another pack).
 * @param pack the `.pack` file's bytes
 * @param index its index
 * @returns every entry; null when one is a delta (such a pack cannot be copied entry by entry)
 */
export function entriesOf (pack: Buffer, index: PackIndex): PackEntry[] | null {
  const entries: PackEntry[] = []
  for (const oid of index.oids()) {
    const offset = index.offsetOf(oid)
    const bytes = pack.subarray(offset, index.endOf(offset, pack.length))
    if (DELTA_CODES.has(((bytes[0] ?? 0) >> 4) & 7)) return null
    entries.push({ oid, bytes })
  }
  return entries
}

/**
 * Decodes one pack entry (header and deflated content).
 * @param bytes the entry's bytes, from its offset to its end
 * @returns the object, or 'delta' when it is stored as a delta (read those some other way)
 */
export function decodeEntry (bytes: Buffer): { type: ObjectType, content: Buffer } | 'delta' {
  let byte = bytes[0] ?? 0
  const code = (byte >> 4) & 7
  if (DELTA_CODES.has(code)) return 'delta'
  const type = CODE_TYPES[code]
  if (type === undefined) throw new Error(`Unknown pack object type ${code}`)
  let size = byte & 0x0f
  let shift = 4
  let at = 1
  while ((byte & 0x80) !== 0) {
    byte = bytes[at++] ?? 0
    size += (byte & 0x7f) * 2 ** shift
    shift += 7
  }
  const content = inflateSync(bytes.subarray(at))
  if (content.length !== size) throw new Error('Pack entry size mismatch')
  return { type, content }
}
