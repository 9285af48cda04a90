/** Where a repository's git data lives, found once at start-up with `git rev-parse`. */
import { realpath, stat } from 'node:fs/promises'
import path from 'node:path'
import { StartupError } from '../errors.js'
import { runGit } from './git-process.js'

/**
 * The common git directory of a working tree's top directory. Refuses a path that is not a directory
 * or not the top of a git working tree, a repository without a commit, and one whose object format is not SHA-1.
 * @param repoDir the working tree (absolute)
 * @returns its common dir (absolute): refs, objects, and the service's `cms/` state
 */
export async function commonGitDir (repoDir: string): Promise<string> {
  if (!await stat(repoDir).then(st => st.isDirectory(), () => false)) throw new StartupError(`${repoDir} is not a directory`)
  // `--verify --quiet HEAD` adds HEAD's commit, or exits 1 before the first commit.
  const { code, stdout } = await runGit(repoDir, ['rev-parse', '--show-toplevel', '--git-common-dir', '--show-object-format', '--verify', '--quiet', 'HEAD'])
  const lines = stdout.split('\n')
  if (code !== 0 && (code !== 1 || lines.length < 3)) {
    throw new StartupError(`${repoDir} is not a git repository (git rev-parse found none); run git init and commit first`)
  }
  const [top, commonDir, format, headLine] = lines
  if (top === undefined || commonDir === undefined || top === '') {
    throw new StartupError(`${repoDir} is not a git working tree`)
  }
  if (await realpath(top) !== await realpath(repoDir)) {
    throw new StartupError(`${repoDir} is not a git repository (it lies inside the working tree of ${top}); serve that directory, or run git init and commit in this one`)
  }
  if (format !== 'sha1') {
    throw new StartupError(`${repoDir} is a ${format === 'sha256' ? 'SHA-256' : String(format)} repository; git-cms writes history and drafts as SHA-1 git objects and packs, so it serves only SHA-1 repositories`)
  }
  if (!/^[0-9a-f]{40}$/.test(headLine ?? '')) throw new StartupError(`${repoDir} has no commit yet; commit the site first`)
  return path.resolve(repoDir, commonDir)
}
