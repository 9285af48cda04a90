/**
 * Fixed-string searches with `git grep` for rare, explicit actions (which entries reference a media
 * file before it is deleted), in the working tree and in the trees of refs; never on a read path.
 * The needle follows `-e` and paths are `:(literal)` pathspecs after `--`: nothing from a request
 * is read as an option or a glob.
 */
import { runGit } from './git-process.js'

/** How long one search may run. */
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
  const { code, stdout, stderr } = await runGit(repoDir, args, GREP_TIMEOUT_MS)
  if (code === 0) return stdout
  if (args[0] === 'grep' && code === 1) return ''
  throw new Error(`git ${args[0]} failed (${code ?? 'timed out'}): ${stderr.trim()}`)
}
