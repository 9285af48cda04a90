/**
 * Atomic file replacement: write a temporary file in the same directory, fsync it, rename it over
 * the target, fsync the directory. A reader, or a crash, never sees half a file.
 *
 * In two steps when the caller has something to do in between: `prepareFileAtomic` writes and
 * fsyncs the temporary file, `commit()` renames it into place (or `abort()` removes it). Underneath
 * is `StagedFile`, which a group commit (group-commit.ts) uses for many files at once: a save's file
 * is staged (possibly into a spare inode under `.git/cms/spares/`, see inode-pool.ts) and renamed
 * only once the history snapshot of the state it replaces is durable (in the history journal, or on
 * its ref).
 *
 * The callback API is used (promisified) for the calls that may block (create, fsync):
 * fs/promises wraps every descriptor in a FileHandle, which measured about twice as slow for these
 * few small calls. Writes of in-memory data, closes and opening a directory are made
 * synchronously: each is a few microseconds of kernel time, less than a thread-pool round trip.
 */
import fs from 'node:fs'
import { randomBytes } from 'node:crypto'
import { promisify } from 'node:util'
import path from 'node:path'
import { openSpare, type FileIdentity, type InodePool } from './inode-pool.js'

const open = promisify(fs.open)
const fsync = promisify(fs.fsync)
const rename = promisify(fs.rename)
const mkdir = promisify(fs.mkdir)

/** Prefix of our temporary files, so a start-up sweep can remove the ones a crash left. */
export const TEMP_PREFIX = '.cms-tmp-'

/** A new file content written and durable under a temporary name, not yet in place. */
export interface PreparedWrite {
  /**
   * Renames the temporary file over the target and makes that durable.
   * @param opts `syncDirectory: false` leaves the directory's fsync to the caller (who writes many
   *   files into one directory and syncs it once)
   * @returns resolves once the new content is in place
   */
  commit: (opts?: { syncDirectory?: boolean }) => Promise<void>
  /**
   * Removes the temporary file; the target stays as it was.
   * @returns resolves once removed
   */
  abort: () => Promise<void>
}

/**
 * Writes `data` to `file` atomically.
 * @param file absolute target path
 * @param data the full new content
 * @param opts `syncDirectory: false` leaves the directory's fsync to the caller
 * @returns resolves once the new content is durable and in place
 */
export async function writeFileAtomic (file: string, data: string | Uint8Array, opts?: { syncDirectory?: boolean }): Promise<void> {
  await (await prepareFileAtomic(file, data)).commit(opts)
}

/**
 * Writes and fsyncs `data` under a temporary name next to `file`.
 * @param file absolute target path
 * @param data the full new content
 * @returns the prepared write, to commit or abort
 */
export async function prepareFileAtomic (file: string, data: string | Uint8Array): Promise<PreparedWrite> {
  const staged = await StagedFile.create(file, data)
  try {
    await staged.sync()
  } catch (err) {
    staged.abort()
    throw err
  }
  let settled = false
  return {
    commit: async (opts) => {
      if (settled) throw new Error('This write was already committed or aborted')
      settled = true
      await staged.place()
      if (opts?.syncDirectory !== false) await syncDirectory(path.dirname(file))
    },
    abort: async () => {
      if (settled) return
      settled = true
      staged.abort()
    }
  }
}

/** How StagedFile.create names and creates the temporary file. */
export interface StageOptions {
  /** The temporary path (default: `.cms-tmp-<random>-<name>` next to the target). */
  tmp?: string
  /** The new file's mode (default 0644, less the umask). */
  mode?: number
  /** A spare inode to overwrite instead of creating a file (when it qualifies; see inode-pool.ts). */
  reuse?: { file: string, identity: FileIdentity } | null
  /** Told the mode and owner of a file this call created. */
  learn?: (identity: FileIdentity) => void
  /** An empty temporary file the caller created ahead (open for writing): written instead of creating one. */
  opened?: { file: string, fd: number }
}

/**
 * A new file content written under a temporary name, not yet durable nor in place: the one
 * write + fsync + rename primitive of entry files, packs and their indexes. Group commits stage
 * many files, fsync them all at once (`syncFiles`), and rename them only when the ref they go with
 * is durable. Creating the file is asynchronous (it can cost a millisecond of kernel time on a
 * churned ext4 block group), and so is `place` (the rename frees the replaced file); the write of an
 * in-memory buffer and the close are cheap system calls made synchronously (a thread-pool round trip
 * cost more than each of them). Packs, renamed under new names, use `placeNow`; entry files of a
 * group commit `placeKeepingOld` (the replaced file is freed later, off the caller's path).
 */
export class StagedFile {
  #fd: number | null
  #state: 'written' | 'synced' | 'placed' | 'aborted' = 'written'

  /**
   * @param tmp the temporary name next to the target
   * @param target the path the content is for
   * @param fd open for writing
   * @param named its name in the inode pool (inode-pool.ts), kept once it is the target; null: none
   * @param size its size in bytes
   * @param pool the pool that gave the name
   */
  private constructor (readonly tmp: string, readonly target: string, fd: number, readonly named: string | null = null, readonly size = 0, private readonly pool: InodePool | null = null) {
    this.#fd = fd
  }

  /**
   * Writes `data` into a spare of the inode pool linked next to the target as the temporary name
   * `tmp`, or into a new file `tmp` linked into the pool, before its fsync (so the durable inode
   * counts both names); placed, it keeps its pool name, and the file it replaces, placed the same
   * way, keeps its own: the rename frees nothing and that file becomes a spare (see inode-pool.ts).
   * @param target absolute path the content is for
   * @param data the full content
   * @param opts `tmp`: the temporary name next to the target; `pool`: the pool; `keep`: spares left
   *   for ref locks; `learn`: told the identity of a file this call created
   * @returns the staged file, or null when the pool cannot take it (the caller stages it the usual way)
   */
  static async createNamed (target: string, data: string | Uint8Array, opts: { tmp: string, pool: InodePool, keep: number, learn?: (identity: FileIdentity) => void }): Promise<StagedFile | null> {
    const dir = path.dirname(target)
    const pool = opts.pool
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
    const spare = pool.takeNamed(dir, Date.now(), opts.keep)
    const fd = spare === null ? null : openSpare(spare)
    if (spare !== null && fd === null) pool.forget()
    if (spare !== null && fd !== null) {
      // A spare: overwritten (its blocks kept, the rest cut) and linked next to the target.
      try {
        for (let at = 0; at < bytes.byteLength;) at += fs.writeSync(fd, bytes, at, bytes.byteLength - at, at)
        fs.ftruncateSync(fd, bytes.byteLength)
        fs.linkSync(spare.file, opts.tmp)
      } catch (err) {
        fs.closeSync(fd)
        fs.rmSync(spare.file, { force: true })
        pool.forget()
        const code = (err as NodeJS.ErrnoException).code
        if (code === 'EXDEV' || code === 'EPERM' || code === 'EMLINK') pool.unlinkable(dir)
        // A full disk or a folder gone is the usual way's to report.
        return null
      }
      return new StagedFile(opts.tmp, target, fd, spare.file, bytes.byteLength, pool)
    }
    // No spare: a new file next to the target, as `create` makes it (its inode allocated near its
    // folder's, not in the pool folder's block group, which on this CI disk is the group of the
    // entry files the first saves free: a create there scanned past every inode freed in the last
    // 5 minutes), given its pool name by a link before its fsync.
    const name = pool.nameFor(dir)
    if (name === null) return null
    const staged = await StagedFile.create(target, bytes, { tmp: opts.tmp, learn: opts.learn }).catch((err: unknown) => {
      pool.forget()
      throw err
    })
    try {
      fs.linkSync(staged.tmp, name)
    } catch (err) {
      pool.forget()
      const code = (err as NodeJS.ErrnoException).code
      if (code === 'EXDEV' || code === 'EPERM' || code === 'EMLINK') pool.unlinkable(dir)
      // Staged all the same, without a pool name.
      return staged
    }
    return staged.#withName(name, bytes.byteLength, pool)
  }

  /** This staged file, with its name in the pool. */
  #withName (named: string, size: number, pool: InodePool): StagedFile {
    const fd = this.#fd!
    this.#fd = null
    this.#state = 'aborted'
    return new StagedFile(this.tmp, this.target, fd, named, size, pool)
  }

  /**
   * Creates the temporary file (and its directory when missing) and writes `data` into it.
   * @param target absolute path the content is for
   * @param data the full content
   * @param opts the temporary name, the mode, a spare inode to reuse (see inode-pool.ts)
   * @returns the staged file
   */
  static async create (target: string, data: string | Uint8Array, opts: StageOptions = {}): Promise<StagedFile> {
    let tmp: string | null = opts.opened?.file ?? null
    let fd: number | null = opts.opened?.fd ?? null
    if (fd === null && opts.reuse != null) {
      fd = openSpare(opts.reuse)
      if (fd !== null) tmp = opts.reuse.file
    }
    const reused = fd !== null && opts.opened === undefined
    if (tmp === null || fd === null) {
      tmp = opts.tmp ?? path.join(path.dirname(target), `${TEMP_PREFIX}${randomBytes(6).toString('hex')}-${path.basename(target)}`)
      fd = await openNew(tmp, opts.mode ?? 0o644)
      if (opts.learn !== undefined) {
        const st = fs.fstatSync(fd)
        opts.learn({ mode: st.mode & 0o7777, uid: st.uid })
      }
    }
    try {
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
      for (let at = 0; at < bytes.byteLength;) at += fs.writeSync(fd, bytes, at, bytes.byteLength - at, at)
      // A reused file keeps its blocks: cut what the old content had beyond the new one.
      if (reused) fs.ftruncateSync(fd, bytes.byteLength)
    } catch (err) {
      fs.closeSync(fd)
      fs.rmSync(tmp, { force: true })
      throw err
    }
    return new StagedFile(tmp, target, fd)
  }

  /**
   * Makes the content durable under its temporary name (fsync), then closes the file.
   * @returns resolves once durable
   */
  async sync (): Promise<void> {
    const fd = this.#fd
    if (fd === null || this.#state !== 'written') throw new Error(`A ${this.#state} file cannot be synced`)
    await fsync(fd)
    this.#fd = null
    fs.closeSync(fd)
    this.#state = 'synced'
  }

  /**
   * Renames the synced file over its target (the caller fsyncs the directory, once for many).
   * Asynchronous: replacing a file frees the old one's inode and blocks, which on ext4 costs up to
   * a millisecond of kernel time. A failed rename removes the temporary file.
   * @returns resolves once renamed
   */
  async place (): Promise<void> {
    if (this.#state !== 'synced') throw new Error(`A ${this.#state} file cannot be placed`)
    this.#state = 'placed'
    try {
      await rename(this.tmp, this.target)
    } catch (err) {
      fs.rmSync(this.tmp, { force: true })
      throw err
    }
  }

  /**
   * `place`, synchronously: for a rename that frees nothing (a new name, such as a pack's, or a
   * target whose inode was kept as a spare), 15 µs of kernel time against 50-60 µs of CPU for the
   * thread-pool round trip. A failed rename removes the temporary file.
   */
  placeNow (): void {
    if (this.#state !== 'synced') throw new Error(`A ${this.#state} file cannot be placed`)
    this.#state = 'placed'
    try {
      fs.renameSync(this.tmp, this.target)
    } catch (err) {
      fs.rmSync(this.tmp, { force: true })
      throw err
    }
  }

  /**
   * `place` without freeing the replaced file on the caller's path: the target is opened read-only
   * first (which changes none of its times), so the synchronous rename that follows only drops a
   * name (~15 µs of kernel time) while the returned descriptor keeps the old inode alive; closing it
   * (`closeInBackground`, once the caller is done waiting) frees the inode and its blocks on a
   * thread-pool thread. On ext4 mounted with `discard`, freeing the replaced file in the rename
   * itself cost 0.3-0.5 ms of device wait per file, serialized by the directory's lock (3.9 ms for
   * 8 saves' files under load). A target that does not exist is a new name (renamed synchronously,
   * nothing to free); one that cannot be opened (a link, no read permission), or Windows (no rename
   * over an open file), takes `place`. A failed rename removes the temporary file.
   * @returns the replaced file's descriptor, to close later, or null
   */
  async placeKeepingOld (): Promise<number | null> {
    if (this.#state !== 'synced') throw new Error(`A ${this.#state} file cannot be placed`)
    if (process.platform === 'win32') {
      await this.place()
      return null
    }
    let old: number | null = null
    try {
      // O_NONBLOCK: a FIFO put in place of an entry must not block the service thread on open.
      old = fs.openSync(this.target, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        await this.place()
        return null
      }
    }
    try {
      this.placeNow()
    } catch (err) {
      if (old !== null) fs.closeSync(old)
      throw err
    }
    return old
  }

  /** Removes the temporary file (nothing when already placed); the target stays as it was. */
  abort (): void {
    if (this.#state === 'placed' || this.#state === 'aborted') return
    this.#state = 'aborted'
    if (this.#fd !== null) {
      try { fs.closeSync(this.#fd) } catch {}
      this.#fd = null
    }
    fs.rmSync(this.tmp, { force: true })
    if (this.named !== null) {
      fs.rmSync(this.named, { force: true })
      this.pool?.forget()
    }
  }
}

/**
 * Fsyncs staged files all at once (the device merges the flushes of concurrent fsyncs).
 * @param files written files
 * @returns resolves once every one is durable; rejects (after all settled) when one failed
 */
export async function syncFiles (files: readonly StagedFile[]): Promise<void> {
  const results = await Promise.allSettled(files.map(async f => { await f.sync() }))
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failed !== undefined) throw failed.reason
}

/**
 * Closes descriptors through the thread pool, without waiting: the last descriptor of a replaced
 * file (see `StagedFile.placeKeepingOld`) frees its inode and blocks there, off the caller's path.
 * @param fds open descriptors (errors closing them are ignored)
 */
export function closeInBackground (fds: readonly number[]): void {
  for (const fd of fds) fs.close(fd, () => {})
}

/**
 * Fsyncs each distinct directory once, all at once.
 * @param dirs directories (duplicates are synced once)
 * @returns resolves when done
 */
export async function syncDirectories (dirs: Iterable<string>): Promise<void> {
  await Promise.all([...new Set(dirs)].map(syncDirectory))
}

/** Creates the temporary file, and its directory when that does not exist yet. */
async function openNew (tmp: string, mode: number): Promise<number> {
  try {
    return await createFile(tmp, mode)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    await mkdir(path.dirname(tmp), { recursive: true })
    return await createFile(tmp, mode)
  }
}

/** A synchronous create slower than this sends the folder's creates through the thread pool. */
const SLOW_CREATE_MS = 0.25
/** For this long. */
const SLOW_FOLDER_MS = 10_000
/** Folders whose creates go through the thread pool, until when (ms since the epoch). */
const slowFolders = new Map<string, number>()

/**
 * Creates a new file (`O_CREAT | O_EXCL`, open for writing), synchronously while that is cheap and
 * through the thread pool in a folder where it was not. Creating a file usually costs 15-40 µs of
 * kernel time, less than a thread-pool round trip (50-70 µs of CPU, two wake-ups); but on
 * journal-less ext4 a new inode is looked for past every recently freed one of the folder's block
 * group, and in the pack and refs folders of a repository that had served a few thousand saves
 * that measured 0.6-0.8 ms (the service thread stalled for it). So a synchronous create that took
 * longer than SLOW_CREATE_MS moves that folder's creates to the pool for SLOW_FOLDER_MS (a
 * descheduled thread also counts as slow: the pool is the safe side).
 * @param file the new file's path
 * @param mode its mode bits (less the umask)
 * @returns the open descriptor; rejects like open(2) (EEXIST, ENOENT ...)
 */
export async function createFile (file: string, mode: number): Promise<number> {
  const dir = path.dirname(file)
  const until = slowFolders.get(dir)
  const now = Date.now()
  if (until !== undefined && until > now) return await open(file, 'wx', mode)
  if (until !== undefined) slowFolders.delete(dir)
  const started = performance.now()
  const fd = fs.openSync(file, 'wx', mode)
  if (performance.now() - started > SLOW_CREATE_MS) {
    // Bounded: a process writes into few folders, and a stale mark only costs a round trip.
    if (slowFolders.size >= 1024) slowFolders.clear()
    slowFolders.set(dir, now + SLOW_FOLDER_MS)
  }
  return fd
}

/**
 * Makes a directory's entries (a rename into it) durable.
 * @param dir the directory
 * @returns resolves when done (file systems that refuse it are skipped)
 */
export async function syncDirectory (dir: string): Promise<void> {
  let fd: number
  try {
    fd = fs.openSync(dir, 'r')
  } catch {
    return
  }
  // Some file systems refuse fsync on a directory; the rename is still atomic there.
  await fsync(fd).catch(() => {})
  fs.closeSync(fd)
}

/**
 * Writes a file atomically from a writer that fills it in steps (and may yield between them): a
 * temporary file next to it (named as the start's sweep of stale temporary files expects), fsync,
 * rename, directory fsync. On any failure the temporary file is removed and the target is as it was.
 * @param file absolute path of the file
 * @param write fills the open temporary file (synchronous writes to `fd`)
 * @returns resolves once the file is durable in place
 */
export async function writeFileInStepsAtomic (file: string, write: (fd: number) => Promise<void> | void): Promise<void> {
  const dir = path.dirname(file)
  await fs.promises.mkdir(dir, { recursive: true })
  const tmp = path.join(dir, `${TEMP_PREFIX}${randomBytes(6).toString('hex')}-${path.basename(file)}`)
  const fd = fs.openSync(tmp, 'wx', 0o644)
  try {
    await write(fd)
    await fsync(fd)
  } catch (err) {
    fs.closeSync(fd)
    await fs.promises.rm(tmp, { force: true })
    throw err
  }
  fs.closeSync(fd)
  try {
    await fs.promises.rename(tmp, file)
  } catch (err) {
    await fs.promises.rm(tmp, { force: true })
    throw err
  }
  await syncDirectory(dir)
}
