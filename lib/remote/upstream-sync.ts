/**
 * Bringing upstream changes in: fetch the remote branch (or `refs/cms/*`), then fast-forward when
 * the local branch is an ancestor of the remote's (git refuses to overwrite local changes, so no
 * write is lost); the changed entries are marked for a re-check so their new revisions show at once.
 */
import { moveHead, type RemoteContext } from './remote-context.js'
import { changedPaths, resolveCommit } from './git-queries.js'

/** git fetch of exactly the refspecs named: no tags, no submodules, no FETCH_HEAD, nothing pruned. */
async function fetchRefspecs (ctx: RemoteContext, refspecs: string[]): Promise<void> {
  await ctx.git.run(['fetch', '--quiet', '--no-tags', '--no-recurse-submodules', '--no-write-fetch-head', ctx.remote, ...refspecs])
}

/**
 * Fetches the remote branch into its tracking ref.
 * @returns the tracking ref's value before and after the fetch (null when absent)
 */
export async function fetchUpstream (ctx: RemoteContext): Promise<{ previous: string | null, upstream: string | null }> {
  const previous = await resolveCommit(ctx.git, ctx.tracking)
  try {
    await fetchRefspecs(ctx, [`+refs/heads/${ctx.branch}:${ctx.tracking}`])
  } catch (err) {
    // An empty repository on the host (or a branch not created yet): the next push creates it.
    if (!/couldn't find remote ref/i.test((err as Error).message)) throw err
    return { previous, upstream: null }
  }
  return { previous, upstream: await resolveCommit(ctx.git, ctx.tracking) }
}

/**
 * Fetches the remote's `refs/cms/*` into `refs/cms-upstream/<remote>/`, apart from the branch's
 * fetch so the two queues never update the same refs at once.
 */
export async function fetchCmsRefs (ctx: RemoteContext): Promise<void> {
  await fetchRefspecs(ctx, [`+refs/cms/*:${ctx.cmsTracking}*`])
}

/** Fast-forwards HEAD (and the working tree) from `from` to `to`. */
export async function fastForward (ctx: RemoteContext, from: string, to: string): Promise<string[]> {
  const paths = await changedPaths(ctx.git, from, to)
  // Refuses (and changes nothing) when a local change, committed or not, would be overwritten.
  await moveHead(ctx, ['merge', '--ff-only', '--no-stat', '--quiet', to], paths)
  return paths
}
