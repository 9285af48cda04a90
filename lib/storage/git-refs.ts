/**
 * Reading and updating git refs the way git itself does, so the service and a `git` command
 * running at the same time never corrupt or silently overwrite each other: an update takes
 * `<ref>.lock` exclusively, writes and fsyncs the new value into it, compares the current value
 * with the expected one (compare-and-swap), and renames the lock onto the ref.
 */
import fs from 'node:fs'
import { readFile, rm, mkdir, readdir, stat } from 'node:fs/promises'
import { promisify } from 'node:util'
import path from 'node:path'
import { createFile, syncDirectory } from './atomic-write.js'

// Descriptor calls through the callback API (see atomic-write.ts for why).
const fsync = promisify(fs.fsync)
const rename = promisify(fs.rename)

const OID = /^[0-9a-f]{40}$/
/** A ref name we accept: `refs/` plus components without anything git forbids or finds special. */
const REF_NAME = /^refs\/(?:[A-Za-z0-9_@%=+-][A-Za-z0-9_@%=+.-]*\/)*[A-Za-z0-9_@%=+-][A-Za-z0-9_@%=+.-]*$/

/** How long an update waits for a lock someone else holds before giving up. */
const LOCK_WAIT_MS = 2000

/** The ref moved since it was read: somebody else updated it first. */
export class RefConflictError extends Error {
  readonly ref: string
  readonly expected: string | null
  readonly actual: string | null

  constructor (ref: string, expected: string | null, actual: string | null) {
    super(`${ref} is ${actual ?? 'missing'}, expected ${expected ?? 'missing'}`)
    this.name = 'RefConflictError'
    this.ref = ref
    this.expected = expected
    this.actual = actual
  }
}

/** Another process held `<ref>.lock` for longer than we were willing to wait. */
export class RefLockedError extends Error {
  readonly ref: string

  constructor (ref: string) {
    super(`${ref} is locked by another process (${ref}.lock exists)`)
    this.name = 'RefLockedError'
    this.ref = ref
  }
}

/**
 * Asserts that a ref name is one we may turn into a path under the git directory.
 * @param ref a full ref name such as `refs/cms/history`
 * @returns the ref name
 */
export function assertRefName (ref: string): string {
  if (!REF_NAME.test(ref) || ref.includes('..') || ref.split('/').some(c => c.endsWith('.lock') || c.endsWith('.'))) {
    throw new Error(`Invalid ref name: ${JSON.stringify(ref)}`)
  }
  return ref
}

/**
 * Reads a ref's commit id: the loose ref file, or else its line in `packed-refs` (after `git gc`).
 * @param gitDir the `.git` directory
 * @param ref a full ref name
 * @returns the 40-hex object id, or null when the ref does not exist
 */
export async function readRef (gitDir: string, ref: string): Promise<string | null> {
  assertRefName(ref)
  const loose = readOptional(path.join(gitDir, ref), file => fs.readFileSync(file, 'utf8'))
  if (loose !== null) {
    const value = loose.trim()
    if (OID.test(value)) return value
    // A symbolic ref or garbage: not something our refs ever hold.
    throw new Error(`${ref} does not hold an object id`)
  }
  return await readPackedRef(gitDir, ref)
}

async function readPackedRef (gitDir: string, ref: string): Promise<string | null> {
  const packed = await readOptionalAsync(path.join(gitDir, 'packed-refs'))
  if (packed === null) return null
  for (const line of packed.split('\n')) {
    // `# pack-refs with: ...` header and `^<oid>` peeled lines of annotated tags are skipped.
    if (line.length < 42 || line[40] !== ' ') continue
    if (line.slice(41) === ref) {
      const oid = line.slice(0, 40)
      if (OID.test(oid)) return oid
    }
  }
  return null
}

function readOptional (file: string, read: (file: string) => string): string | null {
  try {
    return read(file)
  } catch (err) {
    if (isAbsent(err)) return null
    throw err
  }
}

async function readOptionalAsync (file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8')
  } catch (err) {
    if (isAbsent(err)) return null
    throw err
  }
}

function isAbsent (err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code
  // EISDIR: `refs/cms/drafts` asked as a ref; ENOTDIR: a path component is a file.
  return code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR'
}

/**
 * Points a ref at a new object if, and only if, it still holds the expected old value.
 * @param gitDir the `.git` directory
 * @param ref a full ref name
 * @param newOid the new 40-hex object id
 * @param expectedOld the value the caller read (null: the ref must not exist yet)
 * @returns resolves once the new value is durable; throws RefConflictError when the ref moved,
 *   RefLockedError when another process kept the lock for too long
 */
export async function updateRef (gitDir: string, ref: string, newOid: string, expectedOld: string | null): Promise<void> {
  const lock = await lockRef(gitDir, ref, newOid)
  try {
    await lock.sync()
    await lock.commit(expectedOld)
  } finally {
    lock.release()
  }
  await syncDirectory(lock.dir)
}

/** A ref's lock file holding its next value: taken, written, not yet durable nor in place. */
export interface RefLock {
  ref: string
  /** The directory of the ref file (to fsync once the lock is renamed onto the ref). */
  dir: string
  /**
   * Fsyncs the new value in the lock file and closes it.
   * @returns resolves once durable
   */
  sync: () => Promise<void>
  /**
   * Compares the ref with the expected value while holding the lock (nobody following git's
   * protocol can move it now) and renames the synced lock onto the ref; the caller fsyncs `dir`.
   * Throws RefConflictError when the ref moved (the lock is then still held: `release()` it).
   * @param expectedOld the value the new one was built on (null: the ref must not exist yet)
   * @param beforeRename called with the ref file's path once the comparison passed, just before
   *   the rename (a group commit keeps the replaced ref file's inode for reuse, see inode-pool.ts);
   *   true when it did (the rename then frees nothing)
   */
  commit: (expectedOld: string | null, beforeRename?: (file: string) => boolean) => Promise<void>
  /** Removes the lock file unless it was renamed onto the ref. */
  release: () => void
}

/** A file to become a lock instead of creating one: a spare inode of inode-pool.ts, opened for writing. */
export interface SpareFile {
  /** Its name in the pool (dropped once it is the lock). */
  file: string
  /** Open for writing; owned by the lock from now on. */
  fd: number
}

/**
 * Takes `<ref>.lock` (waiting a little while another process holds it) and writes the new value
 * into it, for a group commit that fsyncs it together with its pack.
 * @param gitDir the `.git` directory
 * @param ref a full ref name
 * @param newOid the new 40-hex object id
 * @param spare gives a spare inode to become the lock (see `lockFromSpare`), or null: create one
 * @returns the held lock; throws RefLockedError when another process kept it for too long
 */
export async function lockRef (gitDir: string, ref: string, newOid: string, spare?: () => SpareFile | null): Promise<RefLock> {
  assertRefName(ref)
  if (!OID.test(newOid)) throw new Error(`Invalid object id: ${newOid}`)
  const file = path.join(gitDir, ref)
  const lockFile = `${file}.lock`
  const value = `${newOid}\n`
  let fd: number | null = lockFromSpare(lockFile, value, spare?.() ?? null)
  const written = fd !== null
  fd ??= await openLock(lockFile, ref)
  let state: 'held' | 'synced' | 'renamed' | 'released' = 'held'
  const closeFd = (): void => {
    if (fd === null) return
    const open = fd
    fd = null
    fs.closeSync(open)
  }
  try {
    if (!written) fs.writeSync(fd, value)
  } catch (err) {
    closeFd()
    fs.rmSync(lockFile, { force: true })
    throw err
  }
  return {
    ref,
    dir: path.dirname(file),
    sync: async () => {
      if (fd === null || state !== 'held') throw new Error(`${ref}.lock is not open`)
      await fsync(fd)
      closeFd()
      state = 'synced'
    },
    commit: async (expectedOld, beforeRename) => {
      if (state !== 'synced') throw new Error(`${ref}.lock is not synced`)
      const actual = await readRef(gitDir, ref)
      if (actual !== expectedOld) throw new RefConflictError(ref, expectedOld, actual)
      // When the replaced ref file's inode was kept (a group commit's spare), the rename frees
      // nothing and is made synchronously (~15 µs of kernel time, against 50-60 µs of CPU for a
      // thread-pool round trip); else it frees the old file, which on a file system that discards
      // freed blocks waits for the device: through the thread pool then.
      if (beforeRename?.(file) === true) fs.renameSync(lockFile, file)
      else await rename(lockFile, file)
      state = 'renamed'
    },
    release: () => {
      if (state === 'renamed' || state === 'released') return
      state = 'released'
      try { closeFd() } catch {}
      fs.rmSync(lockFile, { force: true })
    }
  }
}

/**
 * Makes a spare inode the lock file: writes the value into it, gives it the lock's name with
 * `link`, which fails when that name exists (as exclusive as git's `O_CREAT | O_EXCL`), then drops
 * its name in the pool. No inode is allocated: on journal-less ext4 a new one in a refs folder
 * whose block group has many recently freed inodes measured 0.6-0.8 ms (a kill between the link
 * and the unlink leaves a spare with two names, which the pool never writes into, and a stale lock,
 * which the start removes).
 * @returns the lock's descriptor, or null (no spare, or the lock is taken: the caller creates and waits)
 */
function lockFromSpare (lockFile: string, value: string, spare: SpareFile | null): number | null {
  if (spare === null) return null
  try {
    const bytes = Buffer.from(value, 'utf8')
    fs.writeSync(spare.fd, bytes, 0, bytes.length, 0)
    fs.ftruncateSync(spare.fd, bytes.length)
    fs.linkSync(spare.file, lockFile)
  } catch {
    // Held by someone else (EEXIST), no refs folder yet (ENOENT), or anything else: the usual way.
    fs.closeSync(spare.fd)
    fs.rmSync(spare.file, { force: true })
    return null
  }
  // Should this fail, the lock keeps a second name: a spare with two names is never written into.
  try { fs.rmSync(spare.file, { force: true }) } catch {}
  return spare.fd
}

async function openLock (lock: string, ref: string): Promise<number> {
  // Synchronously while creating files in the refs folder is cheap (see createFile).
  const deadline = Date.now() + LOCK_WAIT_MS
  for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
    try {
      return await createFile(lock, 0o644)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      // The ref's directory does not exist yet (the first ref of its namespace).
      if (code === 'ENOENT') { await mkdir(path.dirname(lock), { recursive: true }); continue }
      if (code !== 'EEXIST') throw err
      // Somebody else (a `git` command) holds it; git holds ref locks only for moments.
      if (Date.now() + delay > deadline) throw new RefLockedError(ref)
      await new Promise(resolve => setTimeout(resolve, delay))
    }
  }
}

/**
 * Removes `*.lock` files a crashed process left under our ref namespace. Call it at start-up while
 * holding the instance lock: the namespace is ours, so an old lock there can only be a leftover.
 * @param gitDir the `.git` directory
 * @param refsPrefix the namespace to clean (default `refs/cms/`)
 * @param maxAgeMs locks younger than this are left alone (a `git` command may hold one right now)
 * @returns the ref-relative paths of the removed lock files
 */
export async function removeStaleLocks (gitDir: string, refsPrefix = 'refs/cms/', maxAgeMs = 5000): Promise<string[]> {
  const prefix = refsPrefix.replace(/\/+$/, '')
  assertRefName(prefix)
  const removed: string[] = []
  const now = Date.now()
  const walk = async (rel: string): Promise<void> => {
    let names: import('node:fs').Dirent[]
    try {
      names = await readdir(path.join(gitDir, rel), { withFileTypes: true })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return
      throw err
    }
    for (const dirent of names) {
      const child = `${rel}/${dirent.name}`
      if (dirent.isDirectory()) { await walk(child); continue }
      if (!dirent.isFile() || !dirent.name.endsWith('.lock')) continue
      const info = await stat(path.join(gitDir, child)).catch(() => null)
      if (info === null || now - info.mtimeMs < maxAgeMs) continue
      await rm(path.join(gitDir, child), { force: true })
      removed.push(child)
    }
  }
  await walk(prefix)
  return removed
}
