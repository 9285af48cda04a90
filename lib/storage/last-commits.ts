/**
 * When a few files last changed in the repository's history, asked of git itself: one
 * `git log -1` per file, in parallel (a translation's files, for "outdated"). One path per process
 * lets git use the changed-path Bloom filters of a commit-graph; git 2.39 uses none for a log over
 * several paths. Paths are `--literal-pathspecs` after `--`, never read as options or globs.
 */
import { runGit } from './git-process.js'

/**
 * How long one look-up may walk history before the file is answered unknown (a file untouched for
 * 1,000 commits took 6 s of CPU without a commit-graph, 0.07 s with one).
 */
const LOG_TIMEOUT_MS = 3_000

/** A file's last commit on HEAD. */
export interface LastCommit {
  commit: string
  /** Committer time, seconds since the epoch. */
  time: number
}

/**
 * The last commit of each path on HEAD. Paths no commit touched (new, never committed) and paths
 * whose look-up ran out of time are absent.
 * @param workTree the repository's work tree
 * @param paths repository-relative, `/`-separated paths
 * @returns path -> its last commit
 */
export async function lastCommitsOf (workTree: string, paths: readonly string[]): Promise<Map<string, LastCommit>> {
  const found = new Map<string, LastCommit>()
  await Promise.all([...new Set(paths)].map(async file => {
    const { code, stdout } = await runGit(workTree, ['--literal-pathspecs', 'log', '-1', '--no-renames', '--format=%H %ct', 'HEAD', '--', file], LOG_TIMEOUT_MS)
    const m = code === 0 ? /^([0-9a-f]{40,64}) (\d+)$/.exec(stdout.trim()) : null
    if (m !== null) found.set(file, { commit: m[1]!, time: Number(m[2]) })
  }))
  return found
}

/**
 * Whether one commit is an ancestor of another (or the same), by `git merge-base --is-ancestor`.
 * @param workTree the repository's work tree
 * @param ancestor a commit id
 * @param descendant a commit id
 * @returns true when `ancestor` is reachable from `descendant`
 */
export async function isAncestor (workTree: string, ancestor: string, descendant: string): Promise<boolean> {
  return (await runGit(workTree, ['merge-base', '--is-ancestor', ancestor, descendant], LOG_TIMEOUT_MS)).code === 0
}
