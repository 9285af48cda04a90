/**
 * Retired inodes, kept for reuse: replacing a file by rename frees the old file's inode and blocks,
 * and on the CI machine's ext4 (no journal, mounted with `discard`) freeing blocks discards them on
 * the spot (0.7-2 ms of kernel time per save measured), and allocating a new inode scans past every
 * recently freed one of its block group. A later write puts its new content into a spare (overwrite
 * and truncate: no block is freed while the content stays within its blocks) instead of a new file.
 * A spare is reused only when it is a plain file with this one name left (nothing else links to it),
 * with the mode and owner our new files get, only after REUSE_AFTER_MS (a process still reading the
 * replaced file has long finished), and only once the rename that retired it is durable. Spares a
 * killed process left are adopted at the next start; at most MAX_SPARES files and MAX_BYTES bytes
 * are kept (a file larger than MAX_FILE_BYTES is never kept).
 *
 * Where spares come from: ref files (`retire`: the ref's inode gets a pool name just before its lock
 * is renamed over it) and, since issue 18's ninth pass, entry files, which keep a name in the pool
 * all their life: a save writes its new content into a spare and gives it a second, temporary name
 * in the entry's folder (`link`), or writes a new temporary file there and gives it a pool name,
 * fsyncs it (its two names counted in the durable inode) and renames the temporary name over the
 * entry; the replaced file still has its pool name, so the rename frees nothing, and once its
 * folder's fsync succeeded that name is a spare. Linking an entry into the pool once it is the entry
 * would change its ctime (part of its signature, so a kill between the link and the rename would make
 * the unchanged file look edited from outside); here the second name is given before the file is an
 * entry, and a pool name with two links is never removed. A save that rewrites a spare allocates and
 * frees no inode and no block (no inode search, no discard, no bitmap writes, no write-back of the
 * entry folder at the file's fsync). Entry files have two links; the pool's names are bounded
 * (MAX_NAMES), beyond that saves work as before.
 */
import fs from 'node:fs'
import path from 'node:path'
import { randomBytes } from 'node:crypto'

/** Spares kept at most (a few MB of retired files). */
const MAX_SPARES = 1024
/** Bytes the spares may hold in all. */
const MAX_BYTES = 16 * 1024 * 1024
/** Larger files are freed as usual (their blocks outweigh the saving). */
const MAX_FILE_BYTES = 256 * 1024
/** A spare is reused only this long after its file was replaced. */
const REUSE_AFTER_MS = 200
/** Names in the pool folder at most: spares and the pool names of entry files (a few hundred KB of folder). */
const MAX_NAMES = 4096
/** Names `adopt` looks at per turn of the event loop. */
const ADOPT_BATCH = 256

/** A retired inode's name in the pool, and since when it may be reused. */
export interface Spare {
  file: string
  since: number
  size: number
}

/** What a reused file must look like: the mode and owner of a file we create ourselves. */
export interface FileIdentity {
  mode: number
  uid: number
}

/** The spare inodes of one git directory. */
export class InodePool {
  readonly #dir: string
  readonly #prefix = randomBytes(4).toString('hex')
  #counter = 0
  /** Oldest first; `since` is Infinity until the rename that retired the inode is durable. */
  #spares: Spare[] = []
  #bytes = 0
  /** Directories whose files cannot be linked into the pool (another file system). */
  readonly #unlinkable = new Set<string>()
  /** Directories whose files were linked into the pool: a spare renamed into them stays on its file system. */
  readonly #linkable = new Set<string>()
  #dirReady = false
  #identity: FileIdentity | null = null
  /** Names in the pool folder, about (spares, the pool names of entry files, names left by a killed process). */
  #names = 0
  /** Folders whose files are given a pool name, or not (see `nameFor`). */
  readonly #nameable = new Map<string, boolean>()

  /** @param gitDir the `.git` directory (spares live in `cms/spares/` under it) */
  constructor (gitDir: string) {
    this.#dir = path.join(gitDir, 'cms', 'spares')
  }

  /**
   * Adopts the spares a previous process left (call once at start-up, under the instance lock, before
   * this pool hands out or names anything). The folder is listed and its first ADOPT_BATCH names
   * looked at before this returns to its caller; the rest (the pool may hold up to MAX_NAMES names,
   * ~10 µs each to look at) in batches between turns of the event loop, so a start does not wait for
   * them. Names this process gives meanwhile are never looked at (their prefix is this instance's).
   * @returns resolves once every name was looked at
   */
  async adopt (): Promise<void> {
    let names: string[]
    try {
      names = fs.readdirSync(this.#dir)
    } catch {
      return
    }
    this.#dirReady = true
    const own = `${this.#prefix}-`
    let looked = 0
    for (const name of names) {
      if (name.startsWith(own)) continue
      if (++looked % ADOPT_BATCH === 0) await new Promise(resolve => setImmediate(resolve))
      const file = path.join(this.#dir, name)
      let size: number
      try {
        const st = fs.lstatSync(file)
        // A second name of an entry file (or of a lock a kill interrupted): never written into, and
        // never removed (that would change the entry's ctime); it becomes a spare once the entry is
        // replaced, at a later start.
        if (st.nlink > 1) { this.#names++; continue }
        size = st.size
      } catch { continue }
      if (this.#spares.length >= MAX_SPARES || this.#bytes + size > MAX_BYTES || size > MAX_FILE_BYTES) {
        fs.rmSync(file, { force: true })
        continue
      }
      this.#spares.push({ file, since: 0, size })
      this.#bytes += size
      this.#names++
    }
  }

  /**
   * A new name in the pool folder for an entry file of `dir` written there (see the module's
   * comment), or null: the pool holds MAX_NAMES names, or `dir` is known not to take links from the
   * pool (another file system) or gives its files its own group (a set-group-ID folder: a file made
   * in the pool would not get it).
   * @param dir the entry's folder
   * @returns the path to create, or null
   */
  nameFor (dir: string): string | null {
    if (this.#names >= MAX_NAMES || this.#unlinkable.has(dir)) return null
    let nameable = this.#nameable.get(dir)
    if (nameable === undefined) {
      try {
        nameable = (fs.statSync(dir).mode & 0o2000) === 0
      } catch {
        // Not there yet: its first file goes the usual way (and creates it).
        return null
      }
      if (this.#nameable.size >= 4096) this.#nameable.clear()
      this.#nameable.set(dir, nameable)
    }
    if (!nameable) return null
    if (!this.#dirReady) {
      fs.mkdirSync(this.#dir, { recursive: true })
      this.#dirReady = true
    }
    this.#names++
    return path.join(this.#dir, `${this.#prefix}-${this.#counter++}`)
  }

  /**
   * A spare for an entry file of `dir` that keeps its pool name (see the module's comment).
   * @param dir the entry's folder
   * @param now the current time (ms)
   * @param keep leave this many spares (for ref locks)
   * @returns the spare and the identity it must have, or null
   */
  takeNamed (dir: string, now: number, keep = 0): { file: string, identity: FileIdentity } | null {
    if (this.#unlinkable.has(dir) || this.#nameable.get(dir) !== true) return null
    return this.take(dir, now, keep)
  }

  /**
   * Says that a name of the pool is gone (removed, or it became a lock).
   */
  forget (): void {
    if (this.#names > 0) this.#names--
  }

  /**
   * Says that entry files of `dir` cannot be linked from the pool (EXDEV, EPERM, EMLINK).
   * @param dir the folder
   */
  unlinkable (dir: string): void {
    this.#unlinkable.add(dir)
  }

  /**
   * The pool name of an entry file just replaced (the rename over it freed nothing): a spare once
   * `settle` says that rename is durable, or null when the pool keeps no more spares (the caller
   * then removes the name, which frees the file).
   * @param file its name in the pool
   * @param size its size
   * @returns the spare to settle, or null
   */
  retireNamed (file: string, size: number): Spare | null {
    if (this.#spares.length >= MAX_SPARES || size > MAX_FILE_BYTES || this.#bytes + size > MAX_BYTES) return null
    const entry: Spare = { file, since: Number.POSITIVE_INFINITY, size }
    this.#spares.push(entry)
    this.#bytes += size
    return entry
  }

  /**
   * Learns what reusable spares must look like, from a file this process just created.
   * @param identity its mode bits and owner
   */
  learn (identity: FileIdentity): void {
    this.#identity ??= identity
  }

  /**
   * A spare old enough to be reused for a new file of `dir`, with the identity it must have, or null.
   * @param dir the directory the new file goes to
   * @param now the current time (ms)
   * @param keep none is handed out while the pool holds this many or fewer
   * @returns the spare's path and the identity it must match
   */
  take (dir: string, now: number, keep = 0): { file: string, identity: FileIdentity } | null {
    const first = this.#spares[0]
    if (this.#identity === null || first === undefined || this.#spares.length <= keep || now - first.since < REUSE_AFTER_MS || !this.#reachable(dir, first.file)) return null
    this.#spares.shift()
    this.#bytes -= first.size
    return { file: first.file, identity: this.#identity }
  }

  /**
   * Whether a spare can be renamed into `dir` (the same mounted file system as the pool). Found
   * out once per folder by giving a spare a second, temporary name there and removing it (a kill in
   * between leaves a `.cms-tmp-` file, which the start-up sweep removes, and a spare with two names,
   * which is never written into). Before, only folders that had given the pool a spare themselves
   * were known, and since entry files no longer do, the pool filled up with ref files and was never
   * drawn from.
   */
  #reachable (dir: string, spare: string): boolean {
    if (this.#linkable.has(dir)) return true
    if (this.#unlinkable.has(dir)) return false
    // The temporary prefix of atomic-write.ts (not imported: it imports this module).
    const probe = path.join(dir, `.cms-tmp-probe-${this.#prefix}-${this.#counter++}`)
    try {
      fs.linkSync(spare, probe)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code === 'EXDEV' || code === 'EPERM' || code === 'EMLINK') this.#unlinkable.add(dir)
      return false
    }
    fs.rmSync(probe, { force: true })
    this.#linkable.add(dir)
    return true
  }

  /**
   * Gives a file's current inode a name in the pool, just before a new file is renamed over it
   * (so the rename frees nothing). Nothing happens when the pool is full, the file does not exist
   * (a new entry) or cannot be linked there. The spare is not handed out before `settle` says the
   * rename is durable (its folder fsynced): until then a power loss could bring the old name back
   * onto this inode, so nothing may be written into it.
   * @param file the file about to be replaced
   * @returns the spare to settle, or null
   */
  retire (file: string): Spare | null {
    if (this.#spares.length >= MAX_SPARES || this.#identity === null) return null
    const dir = path.dirname(file)
    if (this.#unlinkable.has(dir)) return null
    let size: number
    try {
      size = fs.lstatSync(file).size
    } catch {
      // A new entry: nothing is replaced.
      return null
    }
    if (size > MAX_FILE_BYTES || this.#bytes + size > MAX_BYTES) return null
    const spare = path.join(this.#dir, `${this.#prefix}-${this.#counter++}`)
    try {
      if (!this.#dirReady) {
        fs.mkdirSync(this.#dir, { recursive: true })
        this.#dirReady = true
      }
      fs.linkSync(file, spare)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      // EXDEV: the content lives on another file system than the git directory.
      if (code === 'EXDEV' || code === 'EPERM' || code === 'EMLINK') this.#unlinkable.add(dir)
      return null
    }
    this.#linkable.add(dir)
    this.#names++
    const entry: Spare = { file: spare, since: Number.POSITIVE_INFINITY, size }
    this.#spares.push(entry)
    this.#bytes += size
    return entry
  }

  /**
   * Says whether the renames that retired these spares are durable: reusable from now on
   * (after REUSE_AFTER_MS), or, when the folder's fsync failed, never (they stay on disk, to be
   * adopted, and checked, at the next start).
   * @param spares what `retire` returned (nulls are skipped)
   * @param durable whether the folder fsync succeeded
   * @param now the current time (ms)
   */
  settle (spares: ReadonlyArray<Spare | null>, durable: boolean, now: number): void {
    const settled = new Set(spares.filter((x): x is Spare => x !== null))
    if (settled.size === 0) return
    if (durable) for (const spare of settled) spare.since = now
    else {
      this.#spares = this.#spares.filter(x => !settled.has(x))
      for (const spare of settled) this.#bytes -= spare.size
    }
  }
}

/**
 * Opens a spare for overwriting, or drops it when it must not be reused: not a plain file, linked
 * from elsewhere (a rename over its entry failed, an entry moved from outside, or a hard link
 * outside: its name is left, see below), or another mode or owner than a new file of ours.
 * @param spare the spare and the identity it must have
 * @returns an fd open for writing, or null (the spare is gone then)
 */
export function openSpare (spare: { file: string, identity: FileIdentity }): number | null {
  let fd: number
  try {
    fd = fs.openSync(spare.file, fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW)
  } catch {
    fs.rmSync(spare.file, { force: true })
    return null
  }
  const st = fs.fstatSync(fd)
  if (st.isFile() && st.nlink === 1 && (st.mode & 0o7777) === spare.identity.mode && st.uid === spare.identity.uid) return fd
  fs.closeSync(fd)
  // A file with another name (an entry moved from outside, a link made elsewhere) keeps its pool
  // name: removing it would change that file's ctime, part of an entry's signature. Left to the next
  // start, which adopts it once it has one name. Anything else (rare) is removed.
  if (st.nlink === 1 || !st.isFile()) fs.rmSync(spare.file, { force: true })
  return null
}
