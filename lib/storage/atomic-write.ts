/**
 * Atomic file replacement: a temporary file in the same directory, fsynced, renamed over the target,
 * the directory fsynced. Not write-file-atomic: our temporary names are hidden (TEMP_PREFIX) and swept at start-up.
 */
import fs from 'node:fs'
import { promisify } from 'node:util'
import { randomBytes } from 'node:crypto'
import path from 'node:path'

const fsync = promisify(fs.fsync)
const write = promisify(fs.write)
const open = promisify(fs.open)
const mkdir = promisify(fs.mkdir)
/** Larger contents are written through the thread pool. */
const SYNC_WRITE_BYTES = 1024 * 1024

/** Prefix of our temporary files, so a start-up sweep can remove the ones a crash left. */
export const TEMP_PREFIX = '.cms-tmp-'

/** A new file content written and durable under a temporary name, not yet in place. */
export interface PreparedWrite {
  /**
   * Renames the temporary file over the target; `syncDirectory: false` leaves the folder's fsync to the caller;
   * `exclusive` links it into place instead, failing with EEXIST when the target exists.
   */
  commit: (opts?: { syncDirectory?: boolean, exclusive?: boolean }) => Promise<void>
  /** Removes the temporary file; the target stays as it was. */
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
 * Writes and fsyncs `data` under a temporary name next to `file` (creating its folder if needed).
 * A file that exists keeps its mode; a new one gets 0644 less the umask.
 * @param file absolute target path
 * @param data the full new content
 * @returns the prepared write, to commit or abort
 */
export async function prepareFileAtomic (file: string, data: string | Uint8Array): Promise<PreparedWrite> {
  const dir = path.dirname(file)
  const tmp = path.join(dir, `${TEMP_PREFIX}${randomBytes(6).toString('hex')}-${path.basename(file)}`.slice(0, 255))
  let st: fs.Stats | undefined
  try { st = fs.lstatSync(file) } catch {}
  const fd = await openNew(tmp, st?.isFile() === true ? st.mode & 0o7777 : 0o644)
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
    if (bytes.byteLength <= SYNC_WRITE_BYTES) fs.writeFileSync(fd, bytes)
    else for (let at = 0; at < bytes.byteLength;) at += (await write(fd, bytes, at, bytes.byteLength - at)).bytesWritten
    await fsync(fd)
  } catch (err) {
    fs.closeSync(fd)
    fs.rmSync(tmp, { force: true })
    throw err
  }
  fs.closeSync(fd)
  let settled = false
  return {
    commit: async (opts) => {
      if (settled) throw new Error('This write was already committed or aborted')
      settled = true
      try {
        if (opts?.exclusive === true) fs.linkSync(tmp, file)
        else fs.renameSync(tmp, file)
      } catch (err) {
        fs.rmSync(tmp, { force: true })
        throw err
      }
      if (opts?.exclusive === true) fs.rmSync(tmp, { force: true })
      if (opts?.syncDirectory !== false) await syncDirectory(dir)
    },
    abort: async () => {
      if (settled) return
      settled = true
      fs.rmSync(tmp, { force: true })
    }
  }
}

/**
 * Creates a file that must not exist yet, and its folder when missing.
 * @param file absolute path
 * @param mode the new file's mode
 * @returns its open file descriptor
 */
export async function openNew (file: string, mode: number): Promise<number> {
  try {
    return await open(file, 'wx', mode)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    await mkdir(path.dirname(file), { recursive: true })
    return await open(file, 'wx', mode)
  }
}

/**
 * Makes a directory's entries (a rename into it) durable.
 * @param dir the directory
 * @returns resolves when done (file systems that refuse it are skipped)
 */
export async function syncDirectory (dir: string): Promise<void> {
  let fd: number
  try { fd = fs.openSync(dir, 'r') } catch { return }
  try { await fsync(fd) } catch {} finally { fs.closeSync(fd) }
}
