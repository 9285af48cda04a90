/**
 * Start-up clean-up of temporary files that an atomic write left behind when the process died
 * between creating its temp file and renaming it. Only files with our own prefix are touched, and
 * only while this instance holds the repository's instance lock.
 */
import { readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { TEMP_PREFIX } from './atomic-write.js'

/**
 * Removes every `.cms-tmp-*` file under the given directories (recursively; symlinks not followed).
 * @param dirs absolute directories (missing ones are skipped)
 * @returns the number of files removed
 */
export async function sweepTempFiles (dirs: string[]): Promise<number> {
  let removed = 0
  const visit = async (dir: string): Promise<void> => {
    let items
    try {
      items = await readdir(dir, { withFileTypes: true })
    } catch {
      return
    }
    // A folder of 100,000 entries: only folders and our own files get a path (issue 18).
    for (const item of items) {
      if (item.isDirectory()) await visit(path.join(dir, item.name))
      else if (item.name.startsWith(TEMP_PREFIX) && item.isFile()) {
        await rm(path.join(dir, item.name), { force: true })
        removed++
      }
    }
  }
  for (const dir of dirs) await visit(dir)
  return removed
}
