/**
 * Path containment: every file the service reads or writes resolves inside the repository, never
 * under `.git/`, and never through a symbolic link that leaves the repository.
 */
import { realpathSync } from 'node:fs'
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
  // The common cases without path.relative (which resolves both paths, a few string copies per
  // call, several calls per save): both paths absolute and already normal (no `.` or `..`
  // component, no empty one, no trailing `/`), as real paths are; then containment is a prefix
  // ending at a `/`. A root under a dot-folder (`<repo>/.git`, checked twice per save) is normal
  // too (issue 18, eleventh pass: it took path.relative's way before, as did every target outside).
  if (path.sep !== '/') return insideByRelative(root, target)
  // Below a root with no `/.` at all, scanning the target's rest is enough (the usual "inside").
  if (target.length > root.length && root.length > 1 && target.charCodeAt(root.length) === 47 && target.startsWith(root) &&
    !root.includes('/.') && !root.includes('//') && root.charCodeAt(root.length - 1) !== 47 && root.charCodeAt(0) === 47 &&
    target.indexOf('/.', root.length) === -1 && target.indexOf('//', root.length) === -1) return true
  if (normalAbsolute(root) && normalAbsolute(target)) {
    if (target === root) return true
    if (!target.startsWith(root) || (root.length > 1 && target.charCodeAt(root.length) !== 47)) return false
    // As path.relative's answer is read below: a first name starting with `..` (`...`) counts as outside.
    return !target.startsWith('..', root.length === 1 ? 1 : root.length + 1)
  }
  return insideByRelative(root, target)
}

function insideByRelative (root: string, target: string): boolean {
  const rel = path.relative(root, target)
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel) && rel.split(path.sep)[0] !== '..')
}

/**
 * A path relative to a folder, with `/` separators: what `path.relative(root, target)` gives (its
 * separators turned into `/`), without resolving both paths when the target is plainly below the
 * root (a save's file below the repository: once per save, issue 18).
 * @param root absolute directory
 * @param target absolute path
 * @returns the relative path
 */
export function relativeSlashPath (root: string, target: string): string {
  return relativeBelow(root, target) ?? path.relative(root, target).split(path.sep).join('/')
}

/**
 * `path.relative(root, target)` when both are normal absolute paths (no `.`, `..` or empty
 * component, no trailing `/`) and the target is strictly below the root, found without resolving
 * them (the watcher's events, a save's paths: several per save); null for anything else, where the
 * caller asks `path.relative`.
 * @param root absolute directory
 * @param target absolute path
 * @returns the relative path, or null
 */
export function relativeBelow (root: string, target: string): string | null {
  if (path.sep === '/' && root.length > 1 && target.length > root.length + 1 && target.charCodeAt(root.length) === 47 &&
    target.startsWith(root) && normalAbsolute(root) && normalAbsolute(target)) {
    return target.slice(root.length + 1)
  }
  return null
}

/** An absolute path with no `.`, `..` or empty component and no trailing `/` (`/` itself is one). */
function normalAbsolute (p: string): boolean {
  if (p.charCodeAt(0) !== 47) return false
  if (p.length === 1) return true
  if (p.charCodeAt(p.length - 1) === 47 || p.includes('//')) return false
  // Every `/.` must start a name that is neither `.` nor `..`.
  for (let at = p.indexOf('/.'); at !== -1; at = p.indexOf('/.', at + 2)) {
    const next = p.charCodeAt(at + 2) // NaN at the end
    if (Number.isNaN(next) || next === 47) return false
    if (next === 46) {
      const after = p.charCodeAt(at + 3)
      if (Number.isNaN(after) || after === 47) return false
    }
  }
  return true
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
