/**
 * Writes the objects of one commit as loose objects, each first as a fsynced `tmp_obj_*` file; `durable()`
 * renames them. Like git (`core.fsync=loose-object`), the ref update's fsync commits the renames.
 */
import { closeSync, fsync as fsyncCallback, renameSync, rmSync, writeFileSync } from 'node:fs'
import { promisify } from 'node:util'
import path from 'node:path'
import { hash, randomBytes } from 'node:crypto'
import zlib from 'node:zlib'
import type { TreeEntry } from './git-store.js'
import { openNew } from './atomic-write.js'

const fsync = promisify(fsyncCallback)
const deflate = promisify(zlib.deflate)
// Larger objects are deflated in the thread pool, in output chunks of up to 1 MiB (4 MiB took 40 ms on
// the event loop, and 16 KiB chunks a turn each; every object there cost 8% of the saves per second).
const DEFLATE_INLINE_BYTES = 64 * 1024

/** git's own level for loose objects (`core.looseCompression` defaults to 1); `git gc` recompresses. */
const LOOSE_LEVEL = 1

/** Characters whose UTF-16 order is not their UTF-8 byte order: names without them sort as strings as git sorts bytes. */
const UTF16_ORDER_DIFFERS = /[\uD800-\uFFFF]/

/** The author and committer of every commit we write. */
const AUTHOR = 'git-cms <git-cms@users.git-cms.invalid>'

/** The objects of one commit being written. */
export class NewObjects {
  /** Objects being written and fsynced under a temporary name (err: that failed), not yet renamed. */
  readonly #written: Array<Promise<{ tmp: string, file: string, err?: unknown }>> = []
  /** Temporary names are this prefix and a count (a random name each cost 1% of a save's CPU). */
  readonly #tmpPrefix = `tmp_obj_${randomBytes(4).toString('hex')}`
  #count = 0

  /** @param gitDir the repository's (common) git directory */
  constructor (private readonly gitDir: string) {}

  /**
   * Writes a blob.
   * @param text its content
   * @returns its object id
   */
  blob (text: string): string {
    return this.#write('blob', Buffer.from(text, 'utf8'))
  }

  /**
   * Writes a tree: entries in git's order (by name, a tree's name as if it ended in `/`).
   * @param entries its entries
   * @returns its object id
   */
  tree (entries: readonly TreeEntry[]): string {
    // Names compared as strings and one buffer for the tree: 4x less CPU than a buffer per name.
    const named = entries.map(e => {
      const key = e.type === 'tree' ? `${e.path}/` : e.path
      return { e, key, head: `${e.mode.replace(/^0+/, '')} ${e.path}\0`, plain: !UTF16_ORDER_DIFFERS.test(key) }
    })
    named.sort((a, b) => a.plain && b.plain ? (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) : Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)))
    let size = 0
    for (const { head } of named) size += Buffer.byteLength(head) + 20
    const content = Buffer.allocUnsafe(size)
    let at = 0
    for (const { e, head } of named) {
      at += content.write(head, at, 'utf8')
      at += content.write(e.oid, at, 'hex')
    }
    return this.#write('tree', content)
  }

  /**
   * Writes a commit by git-cms.
   * @param tree its root tree
   * @param parent its parent (null: the first commit of a ref)
   * @param message its message
   * @returns its object id
   */
  commit (tree: string, parent: string | null, message: string): string {
    const who = `${AUTHOR} ${Math.floor(Date.now() / 1000)} +0000`
    return this.#write('commit', Buffer.from(`tree ${tree}\n${parent === null ? '' : `parent ${parent}\n`}author ${who}\ncommitter ${who}\n\n${message}\n`, 'utf8'))
  }

  /** Hashes, deflates and starts writing one object (one git has is written again: asking first costs more). */
  #write (type: 'blob' | 'tree' | 'commit', content: Buffer): string {
    const wrapped = Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content])
    const oid = hash('sha1', wrapped)
    const file = path.join(this.gitDir, 'objects', oid.slice(0, 2), oid.slice(2))
    const tmp = path.join(path.dirname(file), `${this.#tmpPrefix}${this.#count++}`)
    const data = wrapped.length <= DEFLATE_INLINE_BYTES
      ? zlib.deflateSync(wrapped, { level: LOOSE_LEVEL })
      : deflate(wrapped, { level: LOOSE_LEVEL, chunkSize: Math.min(wrapped.length, 1 << 20) })
    this.#written.push(this.#writeTemporary(tmp, data).then(() => ({ tmp, file }), (err: unknown) => ({ tmp, file, err })))
    return oid
  }

  /** Creates and writes a temporary file (making its fan-out folder when missing), and fsyncs it. */
  async #writeTemporary (tmp: string, data: Buffer | Promise<Buffer>): Promise<void> {
    const fd = await openNew(tmp, 0o444)
    try {
      writeFileSync(fd, await data)
      await fsync(fd)
    } finally {
      closeSync(fd)
    }
  }

  /**
   * Puts every object written so far under its name once its fsync ended.
   * @returns resolves once done
   */
  async durable (): Promise<void> {
    const written = await Promise.all(this.#written.splice(0))
    const failed = written.find(w => w.err !== undefined)
    if (failed !== undefined) {
      for (const w of written) rmSync(w.tmp, { force: true })
      throw failed.err
    }
    for (const w of written) renameSync(w.tmp, w.file)
  }

  /**
   * Removes what was written but not made durable (a build that wrote nothing new to the ref, or failed).
   * @returns resolves once removed
   */
  async discard (): Promise<void> {
    for (const w of await Promise.all(this.#written.splice(0))) rmSync(w.tmp, { force: true })
  }
}
