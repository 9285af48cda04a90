/**
 * Searches through git for rare, explicit actions, never on a read path. A needle follows `-e` and
 * paths are literal pathspecs after `--`: nothing from a request is read as an option or a glob.
 */
import { runGit } from './git-process.js'

const GREP_TIMEOUT_MS = 30_000
/** Refs per `git grep` call. */
const REF_CHUNK = 100

/**
 * The working-tree files under `folders` that contain `needle`.
 * @param repoDir the repository
 * @param needle the fixed string
 * @param folders repository-relative folders (`/`-separated; `.` for all)
 * @returns repository-relative paths, sorted
 */
export async function grepWorkingTree (repoDir: string, needle: string, folders: readonly string[]): Promise<string[]> {
  if (folders.length === 0) return []
  const specs = folders.map(f => f === '.' ? ':(literal).' : `:(literal)${f}/`)
  const out = await git(repoDir, ['grep', '-z', '-l', '-F', '-I', '--untracked', '--no-color', '-e', needle, '--', ...specs])
  return out.split('\0').filter(p => p !== '').sort()
}

/**
 * The files of the trees of every ref under a prefix that contain `needle`.
 * @param repoDir the repository
 * @param needle the fixed string
 * @param prefix e.g. `refs/cms/drafts/`
 * @returns `{ ref, path }` pairs
 */
export async function grepRefs (repoDir: string, needle: string, prefix: string): Promise<Array<{ ref: string, path: string }>> {
  const refs = (await git(repoDir, ['for-each-ref', '--format=%(refname)', prefix])).split('\n').filter(r => r.startsWith(prefix))
  const hits: Array<{ ref: string, path: string }> = []
  for (let i = 0; i < refs.length; i += REF_CHUNK) {
    const out = await git(repoDir, ['grep', '-z', '-l', '-F', '-I', '--no-color', '-e', needle, ...refs.slice(i, i + REF_CHUNK), '--'])
    for (const line of out.split('\0')) {
      const at = line.indexOf(':')
      if (at > 0) hits.push({ ref: line.slice(0, at), path: line.slice(at + 1) })
    }
  }
  return hits
}

/** Runs git; exit status 1 of `grep` (nothing found) is an empty answer. */
async function git (repoDir: string, args: string[]): Promise<string> {
  const { code, stdout, stderr } = await runGit(repoDir, args, { timeoutMs: GREP_TIMEOUT_MS })
  if (code === 0) return stdout
  if (args[0] === 'grep' && code === 1) return ''
  throw new Error(`git ${args[0]} failed (${code ?? 'timed out'}): ${stderr.trim()}`)
}

/** How long one history look-up may run (1,000 commits: 6 s of CPU without a commit-graph, 0.07 s with one). */
const LOG_TIMEOUT_MS = 3_000
/** How long an ancestry check may take before it fails (the sync's git commands allow as long). */
const ANCESTRY_TIMEOUT_MS = 60_000

/**
 * The last commit of each path on HEAD, one `git log -1` per path in parallel (git 2.39 uses the
 * commit-graph's Bloom filters for one path only). Paths never committed or timed out are absent.
 * @param workTree the repository's work tree
 * @param paths repository-relative, `/`-separated paths
 * @returns path -> its last commit and that commit's committer time (seconds since the epoch)
 */
export async function lastCommitsOf (workTree: string, paths: readonly string[]): Promise<Map<string, { commit: string, time: number }>> {
  const found = new Map<string, { commit: string, time: number }>()
  await Promise.all([...new Set(paths)].map(async file => {
    const { code, stdout } = await runGit(workTree, ['--literal-pathspecs', 'log', '-1', '--no-renames', '--format=%H %ct', 'HEAD', '--', file], { timeoutMs: LOG_TIMEOUT_MS })
    const m = code === 0 ? /^([0-9a-f]{40,64}) (\d+)$/.exec(stdout.trim()) : null
    if (m !== null) found.set(file, { commit: m[1]!, time: Number(m[2]) })
  }))
  return found
}

/**
 * Whether one commit is an ancestor of another (or the same), by `git merge-base --is-ancestor`.
 * Any other answer (an unknown commit, git killed after a minute) throws: a sync must not read a
 * failure as "not an ancestor", which it would record as a force push.
 * @param workTree the repository's work tree
 * @param ancestor a commit id
 * @param descendant a commit id
 * @returns true when `ancestor` is reachable from `descendant`, false when it is not
 */
export async function isAncestor (workTree: string, ancestor: string, descendant: string): Promise<boolean> {
  if (ancestor === descendant) return true
  const { code, stderr } = await runGit(workTree, ['merge-base', '--is-ancestor', ancestor, descendant], { timeoutMs: ANCESTRY_TIMEOUT_MS })
  if (code === 0 || code === 1) return code === 0
  throw new Error(`git merge-base --is-ancestor ${ancestor} ${descendant} failed: ${stderr.trim() || 'timed out'}`)
}
