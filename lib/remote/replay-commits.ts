/**
 * Replays the service's unpushed commits onto a remote branch that moved, when the paths each side
 * changed do not overlap: trees from `git merge-tree --write-tree`, commits from `git commit-tree`
 * (author and message kept), HEAD moved with `git reset --keep` (which refuses to overwrite).
 */
import { moveHead, type RemoteContext } from './remote-context.js'
import { changedPaths } from './git-queries.js'

/** The outcome of a replay. */
export type ReplayResult = { commit: string } | { overlap: string[] } | { error: string }

/**
 * Replays the commits `base..local` onto `upstream` and moves HEAD there.
 * @returns the new HEAD, the overlapping paths, or git's refusal
 */
export async function replayCommits (ctx: RemoteContext, local: string, upstream: string): Promise<ReplayResult> {
  const base = (await ctx.git.run(['merge-base', local, upstream])).trim()
  if (!/^[0-9a-f]{40}$/.test(base)) return { error: 'the local and remote branches share no history' }
  const ours = await changedPaths(ctx.git, base, local)
  const theirs = await changedPaths(ctx.git, base, upstream)
  const theirSet = new Set(theirs)
  const overlap = ours.filter(p => theirSet.has(p))
  if (overlap.length > 0) return { overlap }
  const commits = (await ctx.git.run(['rev-list', '--reverse', '--topo-order', `${base}..${local}`])).split('\n').map(s => s.trim()).filter(Boolean)
  let parent = upstream
  const committer = await ctx.git.committerEnv('git-cms', 'git-cms@localhost')
  for (const commit of commits) {
    const tree = (await ctx.git.run(['merge-tree', '--write-tree', '--no-messages', parent, commit])).split('\n')[0]!.trim()
    const meta = await ctx.git.run(['log', '-1', '--format=%an%x00%ae%x00%ad%x00%B', '--date=raw', commit])
    const [name = 'git-cms', email = 'git-cms@localhost', date = '', ...rest] = meta.split('\0')
    const message = rest.join('\0').replace(/\n+$/, '') + '\n'
    const env = { ...committer, GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, ...(date !== '' ? { GIT_AUTHOR_DATE: date.trim() } : {}) }
    parent = (await ctx.git.run(['commit-tree', tree, '-p', parent, '-F', '-'], { input: message, env })).trim()
  }
  try {
    await moveHead(ctx, ['reset', '--quiet', '--keep', parent], theirs)
  } catch (err) {
    return { error: (err as Error).message }
  }
  return { commit: parent }
}
