/**
 * Which of a few files changed most recently in the repository's history, asked of git itself:
 * one `git log` over just those paths, read until each has shown up (a translation's files, for
 * "outdated"). Paths are `:(top,literal)` pathspecs after `--`, never read as options or globs.
 */
import { spawnGitInWorkTree } from './git-process.js'

/** How long one look-up may run before it answers with what it has seen. */
const LOG_TIMEOUT_MS = 10_000

/**
 * The last commit of each path, newest first: a path's rank is the position of its last commit in
 * `git log`'s walk of HEAD (0: the newest). Paths no commit touched (new, never committed) are absent.
 * @param workTree the repository's work tree
 * @param paths repository-relative, `/`-separated paths
 * @returns path -> { commit, rank }
 */
export async function lastCommitsOf (workTree: string, paths: readonly string[]): Promise<Map<string, { commit: string, rank: number }>> {
  const found = new Map<string, { commit: string, rank: number }>()
  const wanted = new Set(paths)
  if (wanted.size === 0) return found
  const child = spawnGitInWorkTree(workTree, ['log', '--no-renames', '-z', '--format=%x01%H', '--name-only', 'HEAD', '--',
    ...[...wanted].map(p => `:(top,literal)${p}`)])
  child.stderr.resume()
  const timer = setTimeout(() => child.kill(), LOG_TIMEOUT_MS)
  let rest = ''
  let commit = ''
  let rank = -1
  await new Promise<void>(resolve => {
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\0')
      rest = parts.pop() ?? ''
      for (let part of parts) {
        part = part.replace(/^\n/, '')
        if (part.startsWith('\x01')) {
          // `%x01<hash>\n<first path>`: the header and the commit's first name share a NUL-field.
          const newline = part.indexOf('\n')
          commit = part.slice(1, newline < 0 ? undefined : newline)
          rank++
          part = newline < 0 ? '' : part.slice(newline + 1)
        }
        if (part !== '' && wanted.has(part) && !found.has(part)) found.set(part, { commit, rank })
      }
      // Every path placed: the rest of history cannot change the answer.
      if (found.size === wanted.size) child.kill()
    })
    child.on('close', () => resolve())
  })
  clearTimeout(timer)
  return found
}
