/** Start-up clean-up of what a killed process left: atomic writes' temporary files and ref locks under `refs/cms/`. */
import type { Dirent } from 'node:fs'
import { lstat, rm } from 'node:fs/promises'
import path from 'node:path'
import { TEMP_PREFIX } from './atomic-write.js'
import { listFolder, listingPace } from './list-folder.js'

/**
 * Removes every `.cms-tmp-*` file under the given directories (recursively; symlinks not followed).
 * @param dirs absolute directories (missing ones are skipped)
 * @param createdBefore when given, only files with an older ctime (ms) are removed: with the instance
 *   lock's `takenAt`, the sweep can run while this instance writes its own
 * @returns resolves when done
 */
export async function sweepTempFiles (dirs: string[], createdBefore?: number): Promise<void> {
  for (const dir of dirs) {
    await removeFilesUnder(dir, async (file, name) => name.startsWith(TEMP_PREFIX) &&
      (createdBefore === undefined || (await lstat(file).catch(() => null))?.ctimeMs! < createdBefore))
  }
}

/**
 * Removes `*.lock` files under `refs/cms/`: the namespace is ours, so a lock there is a leftover.
 * @param gitDir the git directory
 * @returns resolves when done
 */
export async function removeStaleLocks (gitDir: string): Promise<void> {
  await removeFilesUnder(path.join(gitDir, 'refs', 'cms'), async (_file, name) => name.endsWith('.lock'))
}

/** Removes the files below `dir` (links not followed) that `isLeftover` picks, listing at `pace` (list-folder.ts). */
async function removeFilesUnder (dir: string, isLeftover: (file: string, name: string) => Promise<boolean>, pace = listingPace()): Promise<void> {
  const items: Dirent[] = []
  await listFolder(dir, pace, item => { items.push(item) }).catch(() => {})
  for (const item of items) {
    const file = path.join(dir, item.name)
    if (item.isDirectory()) await removeFilesUnder(file, isLeftover, pace)
    else if (item.isFile() && await isLeftover(file, item.name)) await rm(file, { force: true })
  }
}
