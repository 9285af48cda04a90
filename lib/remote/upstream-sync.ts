/**
 * Bringing upstream changes in: fetch the remote branch (and `refs/cms/*`), then fast-forward when
 * the local branch is an ancestor of the remote's (git refuses to overwrite local changes, so no
 * write is lost); the changed entries are marked for a re-check so their new revisions show at once.
 */
import { withLocks } from '../storage/with-locks.js'
import type { RemoteContext } from './remote-context.js'
import { lockKeysOf } from './remote-context.js'
import { changedPaths, resolveCommit } from './git-queries.js'

/**
 * Fetches the remote branch into its tracking ref (and the remote's `refs/cms/*` into
 * `refs/cms-upstream/<remote>/` when asked).
 * @param ctx the remote context
 * @param withCmsRefs fetch `refs/cms/*` too
 * @returns the tracking ref's value before and after the fetch (null when absent)
 */
export async function fetchUpstream (ctx: RemoteContext, withCmsRefs: boolean): Promise<{ previous: string | null, upstream: string | null }> {
  const previous = await resolveCommit(ctx.git, ctx.tracking)
  const specs = [`+refs/heads/${ctx.branch}:${ctx.tracking}`]
  if (withCmsRefs) specs.push(`+refs/cms/*:${ctx.cmsTracking}*`)
  // No tags, no submodules, no prune of anything else: only the refs named here.
  const fetch = async (refspecs: string[]): Promise<string> => await ctx.git.run(['fetch', '--quiet', '--no-tags', '--no-recurse-submodules', '--no-write-fetch-head', ctx.remote, ...refspecs])
  try {
    await fetch(specs)
  } catch (err) {
    // An empty repository on the host (or a branch not created yet): the next push creates it.
    if (!/couldn't find remote ref/i.test((err as Error).message)) throw err
    if (specs.length > 1) await fetch(specs.slice(1))
    return { previous, upstream: null }
  }
  return { previous, upstream: await resolveCommit(ctx.git, ctx.tracking) }
}

/**
 * Fast-forwards HEAD (and the working tree) from `from` to `to`.
 * @param ctx the remote context
 * @param from the current HEAD
 * @param to a descendant of it
 * @returns the paths that changed
 */
export async function fastForward (ctx: RemoteContext, from: string, to: string): Promise<string[]> {
  const paths = await changedPaths(ctx.git, from, to)
  await withLocks(ctx.locks, lockKeysOf(ctx, paths), async () => {
    try {
      // Refuses (and changes nothing) when a local change, committed or not, would be overwritten.
      await ctx.git.run(['merge', '--ff-only', '--no-stat', '--quiet', to])
    } finally {
      // Whatever git managed to write, the indexes look at these files again.
      ctx.content.markPathsChanged(paths)
    }
  })
  return paths
}
