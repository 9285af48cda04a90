/**
 * Atomic file replacement: write a temporary file in the same directory, fsync it, rename it over
 * the target, fsync the directory. A reader, or a crash, never sees half a file.
 *
 * In two steps when the caller has something to do in between: `prepareFileAtomic` writes and
 * fsyncs the temporary file, `commit()` renames it into place (or `abort()` removes it). A save
 * records its history snapshot while its new file is being written, and renames only once the
 * snapshot is on its ref.
 *
 * The callback API is used (promisified): fs/promises wraps every descriptor in a FileHandle,
 * which measured about twice as slow for these few small calls.
 */
import fs from 'node:fs'
import { randomBytes } from 'node:crypto'
import { promisify } from 'node:util'
import path from 'node:path'

const open = promisify(fs.open)
const write = promisify(fs.write)
const fsync = promisify(fs.fsync)
const close = promisify(fs.close)
const rename = promisify(fs.rename)
const rm = promisify(fs.rm)
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
  const dir = path.dirname(file)
  const tmp = path.join(dir, `${TEMP_PREFIX}${randomBytes(6).toString('hex')}-${path.basename(file)}`)
  const fd = await openNew(tmp)
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
    for (let at = 0; at < bytes.byteLength;) at += (await write(fd, bytes, at, bytes.byteLength - at)).bytesWritten
    await fsync(fd)
  } catch (err) {
    await close(fd).catch(() => {})
    await rm(tmp, { force: true })
    throw err
  }
  await close(fd)
  let settled = false
  return {
    commit: async (opts) => {
      if (settled) throw new Error('This write was already committed or aborted')
      settled = true
      try {
        await rename(tmp, file)
      } catch (err) {
        await rm(tmp, { force: true })
        throw err
      }
      if (opts?.syncDirectory !== false) await syncDirectory(dir)
    },
    abort: async () => {
      if (settled) return
      settled = true
      await rm(tmp, { force: true })
    }
  }
}

/** Creates the temporary file, and its directory when that does not exist yet. */
async function openNew (tmp: string): Promise<number> {
  try {
    return await open(tmp, 'wx', 0o644)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    await mkdir(path.dirname(tmp), { recursive: true })
    return await open(tmp, 'wx', 0o644)
  }
}

/**
 * Makes a directory's entries (a rename into it) durable.
 * @param dir the directory
 * @returns resolves when done (file systems that refuse it are skipped)
 */
export async function syncDirectory (dir: string): Promise<void> {
  let fd: number
  try {
    fd = await open(dir, 'r')
  } catch {
    return
  }
  // Some file systems refuse fsync on a directory; the rename is still atomic there.
  await fsync(fd).catch(() => {})
  await close(fd)
}
