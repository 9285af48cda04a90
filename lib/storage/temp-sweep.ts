/**
 * Start-up clean-up of the temporary files of atomic writes a killed process left behind: only
 * files with our own prefix, and only while this instance holds the repository's instance lock.
 */
import { lstat, readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { TEMP_PREFIX } from './atomic-write.js'

/**
 * Removes every `.cms-tmp-*` file under the given directories (recursively; symlinks not followed).
 * @param dirs absolute directories (missing ones are skipped)
 * @param createdBefore when given, only files whose ctime is before this time (ms since the epoch)
 *   are removed: with the instance lock's acquisition time, the sweep can run while this instance
 *   writes, since every temp file of its own was created after it (see `openCms`)
 * @returns the number of files removed
 */
export async function sweepTempFiles (dirs: string[], createdBefore?: number): Promise<number> {
  let removed = 0
  const visit = async (dir: string): Promise<void> => {
    let items
    try {
      items = await readdir(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const item of items) {
      if (item.isDirectory()) await visit(path.join(dir, item.name))
      else if (item.name.startsWith(TEMP_PREFIX) && item.isFile()) {
        const file = path.join(dir, item.name)
        if (createdBefore !== undefined && !((await lstat(file).catch(() => null))?.ctimeMs! < createdBefore)) continue
        await rm(file, { force: true })
        removed++
      }
    }
  }
  for (const dir of dirs) await visit(dir)
  return removed
}
