/**
 * `refs/cms/*` between the service and its remote: a remote ref is adopted when the local one is
 * absent or its ancestor (compare-and-swap) and its tip is a record signed by this site
 * (storage/record-signature.ts); a local ref ahead is pushed with `--force-with-lease` on the value
 * last fetched; a ref moved on both sides is kept, logged and reported.
 */
import { commitSignedRecord, swapRef, type RemoteContext } from './remote-context.js'
import { isAncestor, listRefs } from './git-queries.js'
import { mergeHistory } from './history-merge.js'

/** The local refs under refs/cms/ and the remote's as last fetched, by their name under refs/cms/. */
async function bothSides (ctx: RemoteContext): Promise<{ local: Map<string, string>, remote: Map<string, string> }> {
  const local = new Map<string, string>()
  const remote = new Map<string, string>()
  for (const [ref, sha] of await listRefs(ctx.git, 'refs/cms/', ctx.cmsTracking)) {
    if (ref.startsWith('refs/cms/')) local.set(ref.slice('refs/cms/'.length), sha)
    else if (ref.startsWith(ctx.cmsTracking)) remote.set(ref.slice(ctx.cmsTracking.length), sha)
  }
  return { local, remote }
}

/**
 * Adopts fetched remote refs where the local ref is absent or behind; reports the diverged ones.
 * Refs in `merged` (names under refs/cms/) are skipped: their owner merges them itself.
 */
export async function adoptCmsRefs (ctx: RemoteContext, merged: ReadonlySet<string> = new Set()): Promise<{ adopted: string[], diverged: string[], retry: string[] }> {
  const { local, remote } = await bothSides(ctx)
  const adopted: string[] = []
  const diverged: string[] = []
  const retry: string[] = []
  for (const [name, theirs] of remote) {
    if (!isCmsRefName(name) || merged.has(name)) continue
    const ours = local.get(name)
    if (ours === theirs) continue
    if (ours !== undefined && await isAncestor(ctx.git, theirs, ours)) continue
    if (!await isSiteRecord(ctx, name, theirs)) {
      // Anyone who can push refs/cms/* could otherwise plant a draft an editor publishes, or a history.
      ctx.log.warn({ ref: `refs/cms/${name}`, commit: theirs }, 'a fetched refs/cms ref is not signed by this site; ignored')
      continue
    }
    if (ours !== undefined && !await isAncestor(ctx.git, ours, theirs)) {
      // Several instances record history: both sides' snapshots are kept (a signed merge commit).
      if (name === 'history' && await mergeHistory(ctx, `refs/cms/${name}`, ours, theirs).catch((err: Error) => { ctx.log.warn({ error: err.message }, 'could not merge refs/cms/history'); return false })) { adopted.push(name); continue }
      diverged.push(name)
      continue
    }
    // Compare-and-swap: fails when the service wrote the ref since we read it (next sync retries).
    if (await swapRef(ctx, `refs/cms/${name}`, theirs, ours ?? null)) {
      adopted.push(name)
    } else {
      retry.push(name)
      ctx.log.info({ ref: `refs/cms/${name}` }, 'a fetched refs/cms ref was not adopted; the next sync retries')
    }
  }
  if (diverged.length > 0) ctx.log.warn({ refs: diverged.map(n => `refs/cms/${n}`) }, 'refs/cms refs changed both here and on the remote; keeping the local ones and not pushing them')
  ctx.state.report.divergedRefs = diverged.map(n => `refs/cms/${n}`)
  return { adopted, diverged, retry }
}

/**
 * Pushes local refs/cms refs that are new or ahead of the remote's, each with a lease on the value
 * last fetched; returns the names pushed, or git's (redacted) refusal.
 */
export async function pushCmsRefs (ctx: RemoteContext): Promise<{ pushed: string[] } | { error: string }> {
  const { local, remote } = await bothSides(ctx)
  const args: string[] = []
  const names: string[] = []
  for (const [name, tip] of local) {
    if (!isCmsRefName(name)) continue
    const theirs = remote.get(name)
    if (theirs === tip) continue
    const ours = await signedLocalTip(ctx, name, tip)
    if (ours === null) continue
    local.set(name, ours)
    if (theirs !== undefined && !await isAncestor(ctx.git, theirs, ours)) continue
    args.push(`--force-with-lease=refs/cms/${name}:${theirs ?? ''}`)
    names.push(name)
  }
  if (names.length === 0) return { pushed: [] }
  try {
    await ctx.git.run(['push', '--quiet', '--porcelain', '--no-verify', ...args, ctx.remote, ...names.map(n => `refs/cms/${n}:refs/cms/${n}`)])
  } catch (err) {
    ctx.log.warn({ error: (err as Error).message }, 'could not push refs/cms; the next sync tries again')
    return { error: (err as Error).message }
  }
  for (const name of names) {
    const sha = local.get(name)!
    await ctx.git.run(['update-ref', `${ctx.cmsTracking}${name}`, sha]).catch(() => {})
  }
  return { pushed: names }
}

/** A name under refs/cms/ the service itself writes (history, revocations, drafts of one editor). */
export function isCmsRefName (name: string): boolean {
  return name === 'history' || name === 'revocations' || /^drafts\/[A-Za-z0-9._@%-]{1,250}$/.test(name)
}

/** Whether a commit is signed by this site as the tip of `refs/cms/<name>`. */
async function isSiteRecord (ctx: RemoteContext, name: string, sha: string): Promise<boolean> {
  const text = await ctx.git.run(['cat-file', 'commit', sha]).catch(() => null)
  return text !== null && ctx.signer.verify(`refs/cms/${name}`, text)
}

/**
 * Makes a local tip signed: unchanged when it is, else (an earlier version wrote it unsigned, here, so
 * it is trusted) a signed commit of the same tree on top.
 * @returns the (new) signed tip, or null when the ref moved meanwhile (the next sync retries)
 */
async function signedLocalTip (ctx: RemoteContext, name: string, sha: string): Promise<string | null> {
  if (await isSiteRecord(ctx, name, sha)) return sha
  const ref = `refs/cms/${name}`
  const tree = (await ctx.git.run(['rev-parse', `${sha}^{tree}`])).trim()
  const sealed = await commitSignedRecord(ctx, ref, 'cms: signed by this version', tree, [sha])
  if (!await swapRef(ctx, ref, sealed, sha)) return null
  ctx.log.info({ ref }, 'signed a refs/cms record an earlier version wrote')
  return sealed
}
