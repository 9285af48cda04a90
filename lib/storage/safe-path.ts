/**
 * Path containment: every file the service reads or writes resolves inside the repository, never
 * under `.git/`, and never through a symbolic link that leaves the repository.
 */
import { realpathNow } from './quick-fs.js'
import path from 'node:path'
import { ForbiddenError } from '../errors.js'

/**
 * Joins segments under a root and checks lexical containment (no `..`, no absolute escape).
 * @param root absolute directory the result must stay inside
 * @param segments path segments (already validated names, or config-relative dirs)
 * @returns the absolute path
 */
export function joinInside (root: string, ...segments: string[]): string {
  const full = path.resolve(root, ...segments)
  if (!isInside(root, full)) throw new ForbiddenError('Path leaves the repository')
  return full
}

/**
 * Whether `target` is `root` itself or below it, lexically.
 * @param root absolute directory
 * @param target absolute path
 * @returns true when contained
 */
export function isInside (root: string, target: string): boolean {
  // The common case without path.relative (which resolves both paths, a few string copies per
  // call, several calls per save): a plain absolute root and a target extending it by `/` and
  // names with no `.`, `..` or empty component (no `/.`, no `//` after the root's end).
  if (path.sep === '/' && target.length > root.length && root.length > 1 && target.charCodeAt(root.length) === 47 &&
    target.startsWith(root) && plainAbsolute(root) && target.indexOf('/.', root.length) === -1 &&
    target.indexOf('//', root.length) === -1) return true
  const rel = path.relative(root, target)
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel) && rel.split(path.sep)[0] !== '..')
}

/** An absolute path with no `.`, `..` or empty component and no trailing `/`. */
function plainAbsolute (p: string): boolean {
  return p.charCodeAt(0) === 47 && p.charCodeAt(p.length - 1) !== 47 && !p.includes('/.') && !p.includes('//')
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
      real = realpathNow(probe)
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
