/**
 * The steps of `refs/cms/*` between the service and its remote (RemoteSync runs them on a queue of
 * their own): adopt the remote refs this site signed that are ahead, merge `refs/cms/history` and
 * the shared documents when both sides moved (other refs are kept and reported), and push what is
 * ahead with a lease (docs/ARCHITECTURE.md).
 */
import { rm } from 'node:fs/promises'
import path from 'node:path'
import { parseHistory, unionSnapshots, type Snapshot } from '../storage/history-store.js'
import { isAncestor } from '../storage/git-search.js'
import { commitSignedRecord, listRefs, swapRef, type RemoteContext } from './remote-context.js'

/** The local refs under refs/cms/ and the remote's as last fetched, by their name under refs/cms/ (`text` tells two listings apart). */
export async function bothSides (ctx: RemoteContext): Promise<{ local: Map<string, string>, remote: Map<string, string>, text: string }> {
  const local = new Map<string, string>()
  const remote = new Map<string, string>()
  const tips = await listRefs(ctx.git, 'refs/cms/', ctx.cmsTracking)
  for (const [ref, sha] of tips) {
    if (ref.startsWith('refs/cms/')) local.set(ref.slice('refs/cms/'.length), sha)
    else if (ref.startsWith(ctx.cmsTracking)) remote.set(ref.slice(ctx.cmsTracking.length), sha)
  }
  return { local, remote, text: JSON.stringify([...tips]) }
}

/** Adopts fetched remote refs where the local ref is absent or behind, except `merged` ones; reports the diverged; false when one waits for the next sync. */
export async function adoptCmsRefs (ctx: RemoteContext, merged: ReadonlySet<string>): Promise<boolean> {
  const { local, remote } = await bothSides(ctx)
  const diverged: string[] = []
  let settled = true
  for (const [name, theirs] of remote) {
    if (!isCmsRefName(name) || merged.has(name)) continue
    const ours = local.get(name)
    if (ours === theirs) continue
    if (ours !== undefined && await isAncestor(ctx.repoDir, theirs, ours)) continue
    if (!await isSiteRecord(ctx, name, theirs)) {
      // Anyone who can push refs/cms/* could otherwise plant a draft an editor publishes, or a history.
      ctx.log.warn({ ref: `refs/cms/${name}`, commit: theirs }, 'a fetched refs/cms ref is not signed by this site; ignored')
      continue
    }
    if (ours !== undefined && !await isAncestor(ctx.repoDir, ours, theirs)) {
      // Several instances record history: both sides' snapshots are kept (a signed merge commit).
      if (name !== 'history' || !await mergeHistory(ctx, `refs/cms/${name}`, ours, theirs).catch((err: Error) => { ctx.log.warn({ error: err.message }, 'could not merge refs/cms/history'); return false })) diverged.push(name)
      continue
    }
    // Compare-and-swap: fails when the service wrote the ref since we read it (next sync retries).
    if (!await swapRef(ctx, `refs/cms/${name}`, theirs, ours ?? null)) {
      settled = false
      ctx.log.info({ ref: `refs/cms/${name}` }, 'a fetched refs/cms ref was not adopted; the next sync retries')
    }
  }
  if (diverged.length > 0) ctx.log.warn({ refs: diverged.map(n => `refs/cms/${n}`) }, 'refs/cms refs changed both here and on the remote; keeping the local ones and not pushing them')
  ctx.state.report.divergedRefs = diverged.map(n => `refs/cms/${n}`)
  return settled
}

/** Pushes local refs/cms refs new or ahead, each leased on the value last fetched; the names, or git's refusal. */
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
    if (theirs !== undefined && !await isAncestor(ctx.repoDir, theirs, ours)) continue
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

/** Whether a commit is signed by this site as the tip of `refs/cms/<name>` (clone-instance.ts asks too). */
export async function isSiteRecord (ctx: Pick<RemoteContext, 'git' | 'signer'>, name: string, sha: string): Promise<boolean> {
  const text = await ctx.git.run(['cat-file', 'commit', sha]).catch(() => null)
  return text !== null && ctx.signer.verify(`refs/cms/${name}`, text)
}

/** A local tip an earlier version wrote unsigned gets a signed commit of its tree on top (null: the ref moved). */
async function signedLocalTip (ctx: RemoteContext, name: string, sha: string): Promise<string | null> {
  if (await isSiteRecord(ctx, name, sha)) return sha
  const ref = `refs/cms/${name}`
  const tree = (await ctx.git.run(['rev-parse', `${sha}^{tree}`])).trim()
  const sealed = await commitSignedRecord(ctx, ref, 'cms: signed by this version', tree, [sha])
  if (!await swapRef(ctx, ref, sealed, sha)) return null
  ctx.log.info({ ref }, 'signed a refs/cms record an earlier version wrote')
  return sealed
}

/** git's empty tree, which every repository knows. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'

/** Merges the remote's history commit into the local ref (compare-and-swap on `ours`); true when it did. */
async function mergeHistory (ctx: RemoteContext, ref: string, ours: string, theirs: string): Promise<boolean> {
  const base = (await ctx.git.run(['merge-base', ours, theirs]).catch(() => '')).trim()
  const mine = await changed(ctx, base, ours)
  // Their documents over our tree, `update-index --index-info` lines (mode 0 removes a path).
  let info = ''
  for (const [file, oid] of await changed(ctx, base, theirs)) {
    const own = mine.get(file)
    const blob = own === undefined ? oid : own === oid ? undefined : await unionBlob(ctx, own, oid)
    if (blob !== undefined) info += `${blob === null ? `0 ${'0'.repeat(40)}` : `100644 ${blob}`}\t${file}\0`
  }
  const env = { GIT_INDEX_FILE: path.join(ctx.stateDir, 'history-merge.index') }
  // Merges run one at a time on the refs queue: a lock file here is one a killed merge left.
  await rm(`${env.GIT_INDEX_FILE}.lock`, { force: true })
  let tree: string
  try {
    await ctx.git.run(['read-tree', `${ours}^{tree}`], { env })
    await ctx.git.run(['update-index', '-z', '--index-info'], { input: info, env })
    tree = (await ctx.git.run(['write-tree'], { env })).trim()
  } finally {
    await rm(env.GIT_INDEX_FILE, { force: true })
  }
  const commit = await commitSignedRecord(ctx, ref, 'cms: history (merged)', tree, [ours, theirs])
  return await swapRef(ctx, ref, commit, ours)
}

/** The files that differ from `base` (no base: the empty tree) in `tip` (path -> new blob, null when deleted). */
async function changed (ctx: RemoteContext, base: string, tip: string): Promise<Map<string, string | null>> {
  const out = await ctx.git.run(['diff-tree', '-r', '-z', '--no-renames', base === '' ? EMPTY_TREE : base, tip])
  const files = new Map<string, string | null>()
  const parts = out.split('\0')
  // `:<old mode> <new mode> <old oid> <new oid> <status>` NUL `<path>` NUL
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const m = /^:\d+ \d+ [0-9a-f]{40} ([0-9a-f]{40}) ([A-Z])/.exec(parts[i]!)
    if (m === null) continue
    files.set(parts[i + 1]!, m[2] === 'D' ? null : m[1]!)
  }
  return files
}

/** The union of two history documents' snapshots, written as a blob (null when both were deleted). */
async function unionBlob (ctx: RemoteContext, a: string | null, b: string | null): Promise<string | null> {
  const read = async (oid: string | null): Promise<Snapshot[]> => oid === null ? [] : parseHistory(await ctx.git.run(['cat-file', 'blob', oid]))
  const snapshots = unionSnapshots(await read(a), await read(b))
  if (snapshots.length === 0) return null
  return (await ctx.git.run(['hash-object', '-w', '--stdin'], { input: JSON.stringify({ snapshots }) + '\n' })).trim()
}

/** A document the owner can write out and merge another instance's version into. */
export interface SharedDocument {
  /** Its name under `refs/cms/` (and the file name in the commit, with `.json`). */
  name: string
  /** This instance's current text. */
  text: () => string
  /** Whether the text holds nothing worth sharing (no ref is made for it then). */
  empty: (text: string) => boolean
  /** Takes in another instance's text (the owner checks it and ignores what it refuses). */
  merge: (text: string) => Promise<unknown>
}

/** Merges the remote's version in (compare-and-swap); a result equal to theirs takes their commit. True when moved. */
export async function syncSharedDocument (ctx: RemoteContext, doc: SharedDocument, tips: { ours: string | null, theirs: string | null }): Promise<boolean> {
  const ref = `refs/cms/${doc.name}`
  const file = `${doc.name}.json`
  const { ours, theirs } = tips
  const theirsNew = theirs !== null && theirs !== ours && (ours === null || !await isAncestor(ctx.repoDir, theirs, ours))
  let theirText: string | null = null
  if (theirsNew) {
    theirText = await ctx.git.run(['cat-file', 'blob', `${theirs}:${file}`]).catch(() => null)
    if (theirText !== null) await doc.merge(theirText)
  }
  const text = doc.text()
  if (theirsNew && text === theirText) return await moveRef(ctx, ref, theirs, ours)
  const current = ours === null ? null : await ctx.git.run(['cat-file', 'blob', `${ours}:${file}`]).catch(() => null)
  if (!theirsNew && current === text) return false
  // Nothing to share yet, and nothing to take in: no ref.
  if (ours === null && theirs === null && doc.empty(text)) return false
  const blob = (await ctx.git.run(['hash-object', '-w', '--stdin'], { input: text })).trim()
  const tree = (await ctx.git.run(['mktree'], { input: `100644 blob ${blob}\t${file}\n` })).trim()
  const parents = [ours, theirsNew ? theirs : null].filter((p): p is string => p !== null)
  return await moveRef(ctx, ref, await commitSignedRecord(ctx, ref, `cms: ${doc.name}`, tree, parents), ours)
}

/** Sets the local ref from `ours` to `to` (compare-and-swap); false when it moved meanwhile. */
async function moveRef (ctx: RemoteContext, ref: string, to: string, ours: string | null): Promise<boolean> {
  const moved = await swapRef(ctx, ref, to, ours)
  if (!moved) ctx.log.info({ ref }, 'a shared refs/cms document moved meanwhile; the next sync merges it')
  return moved
}
