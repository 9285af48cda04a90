/**
 * Walks a site's folder for `git cms init`: lists its files below a folder without ever following
 * a symbolic link (a link is reported, not read), skipping hidden names, bounded in depth and count.
 */
import { lstat, readdir, realpath } from 'node:fs/promises'
import path from 'node:path'
import { isInside as isLexicallyInside } from '../storage/safe-path.js'

/** What a walk found below one folder (paths relative to that folder, `/`-separated). */
export interface FolderScan {
  /** Regular files, sorted. */
  files: string[]
  /** Symbolic links (files or folders), never followed. */
  links: string[]
  /** True when the walk stopped at MAX_FILES or MAX_DEPTH. */
  truncated: boolean
  /** True when the folder exists but is a link, or leads outside the repository (not walked). */
  leavesRepository: boolean
}

/** At most this many files are listed per folder (init looks at a site, it does not index it). */
export const MAX_FILES = 50_000
/** Folders deeper than this are not walked. */
export const MAX_DEPTH = 16

/** Folders that hold tooling, never content, wherever they appear. */
const NEVER_CONTENT = new Set(['node_modules', '.git'])

/**
 * Lists the files below a folder of the repository.
 * @returns the files and links found; an absent folder gives empty lists
 */
export async function scanFolder (repoDir: string, folder: string, opts: { recursive?: boolean } = {}): Promise<FolderScan> {
  const scan: FolderScan = { files: [], links: [], truncated: false, leavesRepository: false }
  const root = path.resolve(repoDir, folder)
  if (!(await isInside(repoDir, root))) {
    scan.leavesRepository = await lstat(root).then(() => true, () => false)
    return scan
  }
  const walk = async (dir: string, rel: string, depth: number): Promise<void> => {
    let dirents
    try { dirents = await readdir(dir, { withFileTypes: true }) } catch { return }
    dirents.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
    for (const dirent of dirents) {
      if (dirent.name.startsWith('.') || NEVER_CONTENT.has(dirent.name)) continue
      const childRel = rel === '' ? dirent.name : `${rel}/${dirent.name}`
      if (dirent.isSymbolicLink()) { scan.links.push(childRel); continue }
      if (dirent.isFile()) {
        if (scan.files.length >= MAX_FILES) { scan.truncated = true; return }
        scan.files.push(childRel)
      } else if (dirent.isDirectory() && opts.recursive !== false) {
        if (depth >= MAX_DEPTH) { scan.truncated = true; continue }
        await walk(path.join(dir, dirent.name), childRel, depth + 1)
      }
    }
  }
  await walk(root, '', 0)
  return scan
}

/**
 * Whether a path is the repository root or inside it, after resolving every link on the way (a
 * folder named in a generator's config may itself be a link leaving the repository).
 */
async function isInside (repoDir: string, target: string): Promise<boolean> {
  try {
    if (!(await lstat(target)).isDirectory()) return false
    const [realRoot, realTarget] = await Promise.all([realpath(repoDir), realpath(target)])
    return isLexicallyInside(realRoot, realTarget)
  } catch {
    return false
  }
}
