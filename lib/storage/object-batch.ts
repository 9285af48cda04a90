/**
 * The objects of one commit (blobs, trees, the commit itself), encoded the way git does and named
 * by their SHA-1, collected in memory so that PackStore writes them as one pack.
 */
import { createHash } from 'node:crypto'
import { STORE_BELOW, storedBlobEntryOf, type ObjectType, type PackObject } from './pack-file.js'

/** One entry of a tree object. */
export interface TreeItem {
  /** `100644` for a file, `040000` (or `40000`) for a directory */
  mode: string
  /** the file or directory name (no slash) */
  path: string
  oid: string
  type: 'blob' | 'tree' | 'commit'
}

/** Who wrote a commit, and when. */
export interface Signature {
  name: string
  email: string
  /** seconds since the epoch */
  timestamp: number
}

/** Printable ASCII only. */
const ASCII = /^[\x20-\x7e]*$/

function isAscii (name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i)
    if (c < 0x20 || c > 0x7e) return false
  }
  return true
}

/** A tree entry's mode as git writes it (no leading zeros: `40000`). */
function modeOf (e: TreeItem): string {
  return e.mode.charCodeAt(0) === 0x30 ? e.mode.replace(/^0+/, '') : e.mode
}

/** Git's order of ASCII names: by bytes, a directory as if its name ended in `/`. */
function compareAscii (a: TreeItem, b: TreeItem): number {
  const x = a.path
  const y = b.path
  const n = Math.min(x.length, y.length)
  for (let i = 0; i < n; i++) {
    const d = x.charCodeAt(i) - y.charCodeAt(i)
    if (d !== 0) return d
  }
  const cx = x.length > n ? x.charCodeAt(n) : a.type === 'tree' ? 0x2f : -1
  const cy = y.length > n ? y.charCodeAt(n) : b.type === 'tree' ? 0x2f : -1
  return cx - cy
}

/** Writes a 40-digit hex object id as its 20 bytes. */
function writeOid (content: Buffer, at: number, oid: string): number {
  if (oid.length !== 40) throw new Error(`Invalid object id in tree: ${JSON.stringify(oid)}`)
  for (let i = 0; i < 40; i += 2) {
    const hi = hexValue(oid.charCodeAt(i))
    const lo = hexValue(oid.charCodeAt(i + 1))
    if (hi < 0 || lo < 0) throw new Error(`Invalid object id in tree: ${JSON.stringify(oid)}`)
    content[at++] = (hi << 4) | lo
  }
  return at
}

function hexValue (c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30
  if (c >= 0x61 && c <= 0x66) return c - 0x57
  if (c >= 0x41 && c <= 0x46) return c - 0x37
  return -1
}

function isSorted (entries: TreeItem[]): boolean {
  for (let i = 1; i < entries.length; i++) if (compareAscii(entries[i - 1]!, entries[i]!) >= 0) return false
  return true
}

/** The tree's bytes by the general rule (names with any byte): the slow path. */
function encodeTreeBytes (entries: TreeItem[]): Buffer {
  const items = entries.map(e => {
    // Git sorts names as bytes, a directory as if its name ended in `/`.
    return { e, key: e.type === 'tree' ? `${e.path}/` : e.path, head: `${e.mode.replace(/^0+/, '')} ${e.path}\0` }
  })
  if (items.every(i => ASCII.test(i.key))) items.sort((a, b) => a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
  else items.sort((a, b) => Buffer.compare(Buffer.from(a.key, 'utf8'), Buffer.from(b.key, 'utf8')))
  const content = Buffer.alloc(items.reduce((n, i) => n + Buffer.byteLength(i.head, 'utf8') + 20, 0))
  let at = 0
  for (const { e, head } of items) {
    at += content.write(head, at, 'utf8')
    at += content.write(e.oid, at, 'hex')
  }
  return content
}

/**
 * Where each entry's object id starts in an encoded tree, by entry name.
 * @param content a tree object's content
 * @returns name -> offset of its 20-byte id
 */
export function treeIdOffsets (content: Buffer): Map<string, number> {
  const offsets = new Map<string, number>()
  let at = 0
  while (at < content.length) {
    const space = content.indexOf(0x20, at)
    const nul = content.indexOf(0, space)
    if (space < 0 || nul < 0 || nul + 21 > content.length) throw new Error('Truncated tree object')
    offsets.set(content.toString('utf8', space + 1, nul), nul + 1)
    at = nul + 21
  }
  return offsets
}

/** Objects to be written together. */
export class ObjectBatch {
  readonly objects: PackObject[] = []

  /**
   * Adds a blob.
   * @param content the file content
   * @returns the blob's object id
   */
  blob (content: Buffer): string {
    return this.add('blob', content)
  }

  /**
   * Adds a blob of a text's UTF-8 bytes: a small one encoded straight into its pack entry (see
   * `storedBlobEntryOf`), a large one as `blob` does.
   * @param text the file's text
   * @returns the blob's object id
   */
  blobText (text: string): string {
    const size = Buffer.byteLength(text, 'utf8')
    if (size >= STORE_BELOW) return this.blob(Buffer.from(text, 'utf8'))
    const { bytes, content } = storedBlobEntryOf(text, size)
    const oid = createHash('sha1').update(`blob ${size}\0`).update(content).digest('hex')
    this.objects.push({ oid, type: 'blob', content, entry: bytes })
    return oid
  }

  /**
   * Adds a tree; entries may come in any order (they are sorted the way git sorts them).
   * @param entries the tree's entries
   * @returns the tree's object id
   */
  tree (entries: TreeItem[]): string {
    for (const e of entries) {
      if (e.path === '' || e.path.includes('/') || e.path.includes('\0')) throw new Error(`Invalid tree entry name: ${JSON.stringify(e.path)}`)
    }
    if (!entries.every(e => isAscii(e.path))) return this.add('tree', encodeTreeBytes(entries))
    // ASCII names (ids and shard names always are): string order is byte order, and the entries
    // are encoded char by char (a shard tree of a few hundred names is hashed at every commit:
    // Buffer.write per field and a sort with a key string per entry cost 5x this).
    const items = isSorted(entries) ? entries : [...entries].sort(compareAscii)
    let size = 0
    for (const e of items) size += modeOf(e).length + e.path.length + 22
    const content = Buffer.allocUnsafe(size)
    let at = 0
    for (const e of items) {
      const mode = modeOf(e)
      for (let i = 0; i < mode.length; i++) content[at++] = mode.charCodeAt(i)
      content[at++] = 0x20
      const name = e.path
      for (let i = 0; i < name.length; i++) content[at++] = name.charCodeAt(i)
      content[at++] = 0
      at = writeOid(content, at, e.oid)
    }
    return this.add('tree', content)
  }

  /**
   * Adds a tree that differs from an already encoded one only in the object ids of some of its
   * entries (same names, modes and order): the encoded bytes are copied and those ids overwritten,
   * instead of encoding (and checking the order of) every entry again. A collection's tree of 256
   * shards changes one or a few shard ids per commit.
   * @param base the encoded content of the tree it derives from
   * @param patches where each changed id starts in `base` (see `treeIdOffsets`) and its new value
   * @returns the new tree's object id and its content
   */
  treePatched (base: Buffer, patches: ReadonlyArray<{ at: number, oid: string }>): { oid: string, content: Buffer } {
    const content = Buffer.from(base)
    for (const p of patches) {
      if (p.at < 0 || p.at + 20 > content.length || content[p.at - 1] !== 0) throw new Error('Invalid tree patch offset')
      writeOid(content, p.at, p.oid)
    }
    return { oid: this.add('tree', content), content }
  }

  /**
   * Adds a commit (UTC timestamps).
   * @param commit its tree, parents, author (also the committer) and message
   * @returns the commit's object id
   */
  commit (commit: { tree: string, parents: string[], author: Signature, message: string }): string {
    const who = `${commit.author.name} <${commit.author.email}> ${commit.author.timestamp} +0000`
    const text = [
      `tree ${commit.tree}`,
      ...commit.parents.map(p => `parent ${p}`),
      `author ${who}`,
      `committer ${who}`,
      '',
      commit.message.endsWith('\n') ? commit.message : `${commit.message}\n`
    ].join('\n')
    return this.add('commit', Buffer.from(text, 'utf8'))
  }

  private add (type: ObjectType, content: Buffer): string {
    const oid = createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex')
    this.objects.push({ oid, type, content })
    return oid
  }
}
