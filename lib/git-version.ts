/**
 * The oldest git the service runs on, stated once: remote sync replays commits with
 * `git merge-tree --write-tree`, which came in git 2.38.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { StartupError } from './errors.js'

/** The oldest git release git-cms supports, as [major, minor]. */
export const MIN_GIT_VERSION: readonly [number, number] = [2, 38]

/** Checks `git --version` output; throws StartupError naming found and needed versions when older. */
export function checkGitVersion (output: string): void {
  const needed = `git-cms needs git ${MIN_GIT_VERSION.join('.')} or later (for merge-tree --write-tree)`
  const m = /^git version (\d+)\.(\d+)(\S*)/.exec(output.trim())
  if (m === null) throw new StartupError(`cannot tell git's version from '${output.trim().split('\n')[0] ?? ''}'; ${needed}`)
  const [major, minor] = [Number(m[1]), Number(m[2])]
  const [needMajor, needMinor] = MIN_GIT_VERSION
  if (major > needMajor || (major === needMajor && minor >= needMinor)) return
  throw new StartupError(`git ${m[1]!}.${m[2]!}${m[3]!} found; ${needed}`)
}

/** Runs `git --version` and checks it; throws StartupError when git is missing or too old. */
export async function requireGitVersion (): Promise<void> {
  let output: string
  try {
    output = (await promisify(execFile)('git', ['--version'])).stdout
  } catch (err) {
    throw new StartupError(`cannot run git (${(err as Error).message.split('\n')[0] ?? ''}); git-cms needs git ${MIN_GIT_VERSION.join('.')} or later`)
  }
  checkGitVersion(output)
}
