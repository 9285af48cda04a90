/** Path containment: files the service reads or writes resolve inside the repository, outside `.git/`. */
import { realpathSync } from 'node:fs'
import path from 'node:path'
import { ForbiddenError } from '../errors.js'

/**
 * Whether `target` is `root` itself or below it, lexically.
 * @param root absolute directory
 * @param target absolute path
 * @returns true when contained
 */
export function isInside (root: string, target: string): boolean {
  const rel = path.relative(root, target)
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel))
}

/**
 * Whether an existing path's real location (links resolved) is inside the repository and outside
 * its `.git` directory.
 * @param repoRealDir the repository's real path
 * @param target absolute path
 * @returns false when it leaves them or cannot be resolved
 */
export function resolvesIntoRepo (repoRealDir: string, target: string): boolean {
  try {
    const real = realpathSync.native(target)
    return isInside(repoRealDir, real) && !isInside(path.join(repoRealDir, '.git'), real)
  } catch {
    return false
  }
}

/**
 * A path relative to a folder, with `/` separators.
 * @param root absolute directory
 * @param target absolute path
 * @returns what `path.relative(root, target)` gives, its separators turned into `/`
 */
export function relativeSlashPath (root: string, target: string): string {
  return path.relative(root, target).split(path.sep).join('/')
}

/**
 * Checks that an existing path's real location (symlinks resolved) stays inside the repository
 * and outside its `.git` directory. A missing path is checked through its nearest existing parent.
 * @param repoRealDir the repository's real path
 * @param target absolute path to check
 * @returns resolves when safe; throws ForbiddenError otherwise
 */
export async function assertRealInside (repoRealDir: string, target: string): Promise<void> {
  let probe = target
  let real: string | null = null
  for (;;) {
    try {
      real = realpathSync.native(probe)
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
      const parent = path.dirname(probe)
      if (parent === probe) break
      probe = parent
    }
  }
  if (real === null || !isInside(repoRealDir, real)) throw new ForbiddenError('Path leaves the repository')
  if (isInside(path.join(repoRealDir, '.git'), real)) throw new ForbiddenError('Path is inside .git')
}
