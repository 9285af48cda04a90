/**
 * Atomic file replacement: write a temporary file in the same directory, fsync it, rename it over
 * the target, fsync the directory. A reader, or a crash, never sees half a file.
 */
import { open, rename, rm, mkdir, type FileHandle } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import path from 'node:path'

/** Prefix of our temporary files, so a start-up sweep can remove the ones a crash left. */
export const TEMP_PREFIX = '.cms-tmp-'

/**
 * Writes `data` to `file` atomically.
 * @param file absolute target path
 * @param data the full new content
 * @returns resolves once the new content is durable and in place
 */
export async function writeFileAtomic (file: string, data: string | Uint8Array): Promise<void> {
  const dir = path.dirname(file)
  const tmp = path.join(dir, `${TEMP_PREFIX}${randomBytes(6).toString('hex')}-${path.basename(file)}`)
  const handle = await openNew(tmp)
  try {
    await handle.writeFile(data)
    await handle.sync()
  } finally {
    await handle.close()
  }
  try {
    await rename(tmp, file)
  } catch (err) {
    await rm(tmp, { force: true })
    throw err
  }
  await syncDir(dir)
}

/** Creates the temporary file, and its directory when that does not exist yet. */
async function openNew (tmp: string): Promise<FileHandle> {
  try {
    return await open(tmp, 'wx', 0o644)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    await mkdir(path.dirname(tmp), { recursive: true })
    return await open(tmp, 'wx', 0o644)
  }
}

async function syncDir (dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r')
    try { await handle.sync() } finally { await handle.close() }
  } catch {
    // Some file systems refuse fsync on a directory; the rename is still atomic there.
  }
}
