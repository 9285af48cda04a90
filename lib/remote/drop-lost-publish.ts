/**
 * A publish that lost a race: another instance pushed a change of the same files first. When its
 * commit is the only unpushed one and holds only the files it wrote, it is dropped (`git reset
 * --keep` under the entry locks) so the drafts can be given back as conflicts; anything else stays
 * as a failed push.
 */
import { moveHead, type RemoteContext } from './remote-context.js'
import { changedPaths, isAncestor, resolveCommit } from './git-queries.js'

/**
 * Drops the publish commit `commit` in favour of the remote branch's tip `upstream`.
 * @returns true when HEAD and the working tree now are `upstream`
 */
export async function dropLostPublish (ctx: RemoteContext, commit: string, upstream: string, written: readonly string[]): Promise<boolean> {
  if (await resolveCommit(ctx.git, 'HEAD') !== commit) return false
  const parent = await resolveCommit(ctx.git, `${commit}^`)
  if (parent === null || !await isAncestor(ctx.git, parent, upstream)) return false
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
