/**
 * The oldest git the service runs on, stated once: remote sync replays commits with
 * `git merge-tree --write-tree`, which came in git 2.38.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { StartupError } from './errors.js'

/** The oldest git release git-cms supports, as [major, minor]. */
export const MIN_GIT_VERSION: readonly [number, number] = [2, 38]

/**
 * Checks the output of `git --version` against MIN_GIT_VERSION.
 * @param output what `git --version` printed (`git version 2.39.5`, `git version 2.37.1 (Apple Git-137.1)` ...)
 * @returns nothing; throws StartupError, naming the version found and the one needed, when git is older or unrecognised
 */
export function checkGitVersion (output: string): void {
  const needed = `git-cms needs git ${MIN_GIT_VERSION.join('.')} or later (for merge-tree --write-tree)`
  const m = /^git version (\d+)\.(\d+)(\S*)/.exec(output.trim())
  if (m === null) throw new StartupError(`cannot tell git's version from '${output.trim().split('\n')[0] ?? ''}'; ${needed}`)
  const [major, minor] = [Number(m[1]), Number(m[2])]
  const [needMajor, needMinor] = MIN_GIT_VERSION
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return
  throw new StartupError(`git ${m[1]!}.${m[2]!}${m[3]!} found; ${needed}`)
}

/**
 * Runs `git --version` and checks it (see checkGitVersion).
 * @returns resolves when the git on PATH is recent enough; throws StartupError otherwise, or when there is no git
 */
export async function requireGitVersion (): Promise<void> {
  let output: string
  try {
    output = (await promisify(execFile)('git', ['--version'])).stdout
  } catch (err) {
    throw new StartupError(`cannot run git (${(err as Error).message.split('\n')[0] ?? ''}); git-cms needs git ${MIN_GIT_VERSION.join('.')} or later`)
  }
  checkGitVersion(output)
}
