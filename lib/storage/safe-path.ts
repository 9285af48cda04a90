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
 * Whether an existing path's real location (links resolved) is inside the repository, outside `.git`.
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
 * The real location of a path that may not exist yet: its nearest existing ancestor's, joined with the rest.
 * @param target absolute path
 * @returns an absolute path, or null when it cannot be resolved (a loop, a file on the way)
 */
export function realPathOf (target: string): string | null {
  let probe = target
  for (;;) {
    try {
      return path.join(realpathSync.native(probe), path.relative(probe, target))
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code !== 'ENOENT') return null
      const parent = path.dirname(probe)
      if (parent === probe) return null
      probe = parent
    }
  }
}

/**
 * Whether a path (existing or not) resolves inside a real directory.
 * @param realDir a real (resolved) directory
 * @param target absolute path
 * @returns true when contained
 */
export function resolvesInside (realDir: string, target: string): boolean {
  const real = realPathOf(target)
  return real !== null && isInside(realDir, real)
}

/**
 * Checks that a path's real location (`realPathOf`) is inside the repository and outside `.git`.
 * @param repoRealDir the repository's real path
 * @param target absolute path to check
 * @returns resolves when safe; throws ForbiddenError otherwise (a path that cannot be resolved too)
 */
export async function assertRealInside (repoRealDir: string, target: string): Promise<void> {
  const real = realPathOf(target)
  if (real === null || !isInside(repoRealDir, real)) throw new ForbiddenError('Path leaves the repository')
  if (isInside(path.join(repoRealDir, '.git'), real)) throw new ForbiddenError('Path is inside .git')
}
