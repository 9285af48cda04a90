/**
 * Pushes the branch after a publish: a fast-forward push of HEAD; when the remote moved, the local
 * commits are replayed onto it if their paths do not overlap, and the push retried. Never a force
 * push, never a merge commit. A publish that lost the race on the same files is dropped.
 */
import { isAncestor } from '../storage/git-search.js'
import { changedPaths, fetchUpstream, moveHead, resolveCommit, type RemoteContext } from './remote-context.js'
import type { PushOutcome } from '../api-shapes.js'

/** A push refused because the remote branch changed the same files (`upstream` is its tip). */
export interface PushOverlap { ok: false, error: string, overlap: string[], upstream: string }

/** How often a push is retried after the remote moved under it. */
const MAX_ATTEMPTS = 3

/**
 * Pushes HEAD to the remote branch, replaying onto a moved branch when the paths allow it.
 * @returns the pushed commit, or why it was not pushed (redacted)
 */
export async function pushHead (ctx: RemoteContext): Promise<PushOutcome | PushOverlap> {
  const rewritten = `the remote branch ${ctx.branch} was rewritten (a force push); nothing is pushed until its history and this server's are reconciled`
  const diverged = await ctx.state.diverged()
  for (let attempt = 1; ; attempt++) {
    const head = await resolveCommit(ctx.git, 'HEAD')
    if (head === null) return { ok: false, error: 'the repository has no HEAD commit' }
    if (diverged !== null) return { ok: false, error: rewritten }
    let rejection: string
    try {
      await ctx.git.run(['push', '--quiet', '--porcelain', ctx.remote, `${head}:refs/heads/${ctx.branch}`])
      await ctx.git.run(['update-ref', ctx.tracking, head]).catch(() => {})
      return { ok: true, commit: head }
    } catch (err) {
      rejection = (err as Error).message
    }
    if (!isNonFastForward(rejection) || attempt >= MAX_ATTEMPTS) return { ok: false, error: rejection }
    // The remote branch moved: bring it in and replay our commits onto it.
    const fetched = await fetchUpstream(ctx, head).catch((err: Error) => ({ error: err.message }))
    if ('error' in fetched) return { ok: false, error: fetched.error }
    const { upstream } = fetched
    if (fetched.rewritten) return { ok: false, error: rewritten }
    if (upstream === null) continue
    if (await isAncestor(ctx.repoDir, upstream, head)) continue
    if (await isAncestor(ctx.repoDir, head, upstream)) return { ok: true, commit: upstream }
    const replayed = await replayCommits(ctx, head, upstream)
    if ('overlap' in replayed) {
      const shown = replayed.overlap.slice(0, 5).join(', ') + (replayed.overlap.length > 5 ? ` and ${replayed.overlap.length - 5} more` : '')
      return { ok: false, error: `the remote branch ${ctx.branch} changed the same files since the last sync (${shown}); the commit stays on this server`, overlap: replayed.overlap, upstream }
    }
    if ('error' in replayed) return { ok: false, error: replayed.error }
  }
}

/** A rejection because the remote branch moved (not an ancestor, or another instance's push held its lock). */
function isNonFastForward (message: string): boolean {
  if (/cannot lock ref|failed to (update|lock) ref|\(failed to lock\)|incorrect old value/i.test(message)) return true
  return /\[rejected\]|non-fast-forward|fetch first|stale info|\(rejected\)/i.test(message) && !/remote rejected|hook declined/i.test(message)
}

/**
 * Drops a publish commit that lost a race (another instance pushed a change of the same files first)
 * in favour of the remote branch's tip, when it is the only unpushed commit and holds only the files
 * it wrote (`git reset --keep` under the entry locks), so its drafts can be given back as conflicts.
 * @returns true when HEAD and the working tree now are `upstream`
 */
export async function dropLostPublish (ctx: RemoteContext, commit: string, upstream: string, written: readonly string[]): Promise<boolean> {
  if (await resolveCommit(ctx.git, 'HEAD') !== commit) return false
  const parent = await resolveCommit(ctx.git, `${commit}^`)
  if (parent === null || !await isAncestor(ctx.repoDir, parent, upstream)) return false
  const own = new Set(written)
  if (!(await changedPaths(ctx.git, parent, commit)).every(p => own.has(p))) return false
  const paths = await changedPaths(ctx.git, commit, upstream)
  try {
    await moveHead(ctx, ['reset', '--quiet', '--keep', upstream], paths)
  } catch (err) {
    ctx.log.warn({ commit, upstream, error: (err as Error).message }, 'could not drop a publish commit that lost to another instance; it stays on this server')
    return false
  }
  ctx.log.info({ commit, upstream, files: paths.length }, 'a publish lost to another instance\'s push of the same files; its commit was dropped and its drafts kept')
  return true
}

/** Replays `base..local` onto `upstream` (`merge-tree`, `commit-tree`, `reset --keep`) unless both changed a path. */
async function replayCommits (ctx: RemoteContext, local: string, upstream: string): Promise<{ commit: string } | { overlap: string[] } | { error: string }> {
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
  return await moveHead(ctx, ['reset', '--quiet', '--keep', parent], theirs).then(() => ({ commit: parent }), (err: Error) => ({ error: err.message }))
}
