/**
 * Reads every file of a site's working tree once (not `.git`), so a timed first start finds them
 * in the page cache, as a fresh clone's checkout leaves them: the bench times the server's start,
 * not the disk. This machine pages out file pages left unread for a while (a kernel monitor,
 * `kdamond`, runs a page-out scheme even with most memory free): a site generated hours earlier
 * started in 14-21 s at 100,000 entries with its pages dropped, 6-9 s with them read once (z4,
 * docs/ARCHITECTURE.md).
 */
import { opendir, readFile } from 'node:fs/promises'
import path from 'node:path'

/** Reads in flight at once. */
const PARALLEL = 32

/**
 * Reads every regular file under a folder, `.git` excluded.
 * @param dir the working tree
 * @returns the number of files read
 */
export async function readEveryFile (dir: string): Promise<number> {
  const files: string[] = []
  const walk = async (folder: string): Promise<void> => {
    for await (const entry of await opendir(folder)) {
      if (entry.name === '.git') continue
      const full = path.join(folder, entry.name)
      if (entry.isDirectory()) await walk(full)
      else if (entry.isFile()) files.push(full)
    }
  }
  await walk(dir)
  let next = 0
  await Promise.all(Array.from({ length: PARALLEL }, async () => {
    while (next < files.length) await readFile(files[next++]!)
  }))
  return files.length
}
