/**
 * Pushes the branch after a publish: a fast-forward push of HEAD; when the remote moved, the local
 * commits are replayed onto it if their paths do not overlap, and the push retried. Never a force
 * push, never a merge commit.
 */
import type { RemoteContext } from './remote-context.js'
import { fetchUpstream } from './upstream-sync.js'
import { replayCommits } from './replay-commits.js'
import { isAncestor, resolveCommit } from './git-queries.js'

/** The `push` part of a publish response. */
export type PushOutcome = { ok: true, commit: string } | { ok: false, error: string }

/** A push refused because the remote branch changed the same files (`upstream` is its tip). */
export interface PushOverlap { ok: false, error: string, overlap: string[], upstream: string }

/** How often a push is retried after the remote moved under it. */
const MAX_ATTEMPTS = 3

/**
 * Pushes HEAD to the remote branch, replaying onto a moved branch when the paths allow it.
 * @returns the pushed commit, or why it was not pushed (redacted)
 */
export async function pushHead (ctx: RemoteContext): Promise<PushOutcome | PushOverlap> {
  const diverged = await ctx.state.diverged()
  for (let attempt = 1; ; attempt++) {
    const head = await resolveCommit(ctx.git, 'HEAD')
    if (head === null) return { ok: false, error: 'the repository has no HEAD commit' }
    if (diverged !== null) {
      return { ok: false, error: `the remote branch ${ctx.branch} was rewritten (a force push); nothing is pushed until its history and this server's are reconciled` }
    }
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
    let upstream: string | null
    let previous: string | null
    try {
      ({ upstream, previous } = await fetchUpstream(ctx))
    } catch (err) {
      return { ok: false, error: (err as Error).message }
    }
    if (upstream === null) continue
    if (previous !== null && !await isAncestor(ctx.git, previous, upstream)) {
      await ctx.state.setDiverged({ upstream, previous, local: head, at: Date.now() })
      ctx.log.error({ upstream, previous, local: head }, 'the remote branch was rewritten (force push); not merged, not pushed')
      return { ok: false, error: `the remote branch ${ctx.branch} was rewritten (a force push); nothing is pushed until its history and this server's are reconciled` }
    }
    if (await isAncestor(ctx.git, upstream, head)) continue
    if (await isAncestor(ctx.git, head, upstream)) return { ok: true, commit: upstream }
    const replayed = await replayCommits(ctx, head, upstream)
    if ('overlap' in replayed) {
      const shown = replayed.overlap.slice(0, 5).join(', ') + (replayed.overlap.length > 5 ? ` and ${replayed.overlap.length - 5} more` : '')
      return { ok: false, error: `the remote branch ${ctx.branch} changed the same files since the last sync (${shown}); the commit stays on this server`, overlap: replayed.overlap, upstream }
    }
    if ('error' in replayed) return { ok: false, error: replayed.error }
  }
}

/**
 * A rejection because the remote branch is not an ancestor of what we push, or moved while the
 * host updated it (another instance's push held the ref's lock: `failed to update ref`,
 * `cannot lock ref`).
 */
function isNonFastForward (message: string): boolean {
  if (/cannot lock ref|failed to (update|lock) ref|\(failed to lock\)|incorrect old value/i.test(message)) return true
  return /\[rejected\]|non-fast-forward|fetch first|stale info|\(rejected\)/i.test(message) && !/remote rejected|hook declined/i.test(message)
}
