/**
 * Small questions asked of git during a sync or a push: a ref's value, ancestry, the paths two
 * commits differ in. Each is one git process, asked only by remote work (never by a read).
 */
import type { GitRunner } from '../git-runner.js'

/**
 * The commit a ref or revision names.
 * @returns the full sha, or null when it does not exist
 */
export async function resolveCommit (git: GitRunner, rev: string): Promise<string | null> {
  try {
    const out = (await git.run(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`])).trim()
    return /^[0-9a-f]{40}$/.test(out) ? out : null
  } catch {
    return null
  }
}

/** Whether `ancestor` is an ancestor of (or equal to) `descendant`. */
export async function isAncestor (git: GitRunner, ancestor: string, descendant: string): Promise<boolean> {
  if (ancestor === descendant) return true
  return await git.test(['merge-base', '--is-ancestor', ancestor, descendant])
}

/** The paths that differ between two commits. */
export async function changedPaths (git: GitRunner, from: string, to: string): Promise<string[]> {
  const out = await git.run(['diff', '--name-only', '--no-renames', '-z', from, to, '--'])
  return out.split('\0').filter(p => p !== '')
}

/** The values of every ref under some prefixes (one git process). */
export async function listRefs (git: GitRunner, ...prefixes: string[]): Promise<Map<string, string>> {
  const out = await git.run(['for-each-ref', '--format=%(objectname) %(refname)', ...prefixes])
  const refs = new Map<string, string>()
  for (const line of out.split('\n')) {
    const m = /^([0-9a-f]{40}) (\S+)$/.exec(line.trim())
    if (m !== null) refs.set(m[2]!, m[1]!)
  }
  return refs
}

/**
 * The branch HEAD points at.
 * @returns the short branch name, or null when HEAD is detached
 */
export async function currentBranch (git: GitRunner): Promise<string | null> {
  try {
    const out = (await git.run(['symbolic-ref', '--quiet', '--short', 'HEAD'])).trim()
    return out === '' ? null : out
  } catch {
    return null
  }
}
