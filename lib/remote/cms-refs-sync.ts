/**
 * `refs/cms/*` between the service and its remote: a remote ref is adopted when the local one is
 * absent or its ancestor (compare-and-swap) and its tip is a record signed by this site
 * (storage/record-signature.ts); a local ref ahead is pushed with `--force-with-lease` on the value
 * last fetched; a ref moved on both sides is kept, logged and reported, except two kinds merged into
 * a signed commit with both parents, so every change survives and the push is a fast-forward:
 * `refs/cms/history` (a document both changed gets the union of their snapshots, ts order, the newest
 * MAX_SNAPSHOTS kept) and the documents instances of a site share (revoked sessions, CONTRACT 17: one
 * file in one commit on its own ref). Git plumbing only.
 */
import { MAX_SNAPSHOTS } from '../storage/history-store.js'
import { isAncestor } from '../storage/git-search.js'
import { commitSignedRecord, listRefs, swapRef, type RemoteContext } from './remote-context.js'

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
    if (ours !== undefined && await isAncestor(ctx.repoDir, theirs, ours)) continue
    if (!await isSiteRecord(ctx, name, theirs)) {
      // Anyone who can push refs/cms/* could otherwise plant a draft an editor publishes, or a history.
      ctx.log.warn({ ref: `refs/cms/${name}`, commit: theirs }, 'a fetched refs/cms ref is not signed by this site; ignored')
      continue
    }
    if (ours !== undefined && !await isAncestor(ctx.repoDir, ours, theirs)) {
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

/** Whether a commit is signed by this site as the tip of `refs/cms/<name>`. */
async function isSiteRecord (ctx: RemoteContext, name: string, sha: string): Promise<boolean> {
  const text = await ctx.git.run(['cat-file', 'commit', sha]).catch(() => null)
  return text !== null && ctx.signer.verify(`refs/cms/${name}`, text)
}

/**
 * Makes a local tip signed: unchanged when it is, else (an earlier version wrote it unsigned, here, so
 * it is trusted) a signed commit of the same tree on top; null when the ref moved meanwhile.
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

/** git's empty tree, which every repository knows. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'

/** Merges the remote's history commit into the local ref (compare-and-swap on `ours`); true when it did. */
async function mergeHistory (ctx: RemoteContext, ref: string, ours: string, theirs: string): Promise<boolean> {
  const base = (await ctx.git.run(['merge-base', ours, theirs]).catch(() => '')).trim()
  const mine = await changed(ctx, base, ours)
  const their = await changed(ctx, base, theirs)
  const updates = new Map<string, string | null>()
  for (const [file, oid] of their) {
    const own = mine.get(file)
    if (own === undefined) updates.set(file, oid)
    else if (own !== oid) updates.set(file, await unionBlob(ctx, own, oid))
  }
  const tree = await replaceInTree(ctx, `${ours}^{tree}`, '', updates)
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

interface SnapshotLike { ts: number }

/** The union of two history documents' snapshots, written as a blob (null when both were deleted). */
async function unionBlob (ctx: RemoteContext, a: string | null, b: string | null): Promise<string | null> {
  const read = async (oid: string | null): Promise<SnapshotLike[]> => {
    if (oid === null) return []
    try {
      const doc = JSON.parse(await ctx.git.run(['cat-file', 'blob', oid])) as { snapshots?: unknown }
      return Array.isArray(doc.snapshots) ? doc.snapshots.filter((s): s is SnapshotLike => typeof (s as SnapshotLike | null)?.ts === 'number') : []
    } catch {
      return []
    }
  }
  const seen = new Set<string>()
  const all: SnapshotLike[] = []
  for (const s of [...await read(a), ...await read(b)]) {
    const key = JSON.stringify(s)
    if (!seen.has(key)) { seen.add(key); all.push(s) }
  }
  if (all.length === 0) return null
  all.sort((x, y) => x.ts - y.ts)
  // ts stays strictly increasing per entry (a restore names a snapshot by its ts).
  for (let i = 1; i < all.length; i++) if (all[i]!.ts <= all[i - 1]!.ts) all[i] = { ...all[i]!, ts: all[i - 1]!.ts + 1 }
  const text = JSON.stringify({ snapshots: all.slice(-MAX_SNAPSHOTS) }) + '\n'
  return (await ctx.git.run(['hash-object', '-w', '--stdin'], { input: text })).trim()
}

/** A tree with files replaced (null: removed), its subtrees rewritten where they changed. */
async function replaceInTree (ctx: RemoteContext, tree: string | null, prefix: string, updates: Map<string, string | null>): Promise<string> {
  const entries = new Map<string, { mode: string, type: string, oid: string }>()
  if (tree !== null) {
    for (const line of (await ctx.git.run(['ls-tree', '-z', tree])).split('\0')) {
      const m = /^(\d+) (\w+) ([0-9a-f]{40})\t(.+)$/.exec(line)
      if (m !== null) entries.set(m[4]!, { mode: m[1]!, type: m[2]!, oid: m[3]! })
    }
  }
  const subdirs = new Set<string>()
  for (const [file, oid] of updates) {
    if (!file.startsWith(prefix)) continue
    const rest = file.slice(prefix.length)
    const slash = rest.indexOf('/')
    if (slash >= 0) { subdirs.add(rest.slice(0, slash)); continue }
    if (oid === null) entries.delete(rest)
    else entries.set(rest, { mode: '100644', type: 'blob', oid })
  }
  for (const dir of subdirs) {
    const existing = entries.get(dir)
    const sub = await replaceInTree(ctx, existing?.type === 'tree' ? existing.oid : null, `${prefix}${dir}/`, updates)
    const empty = (await ctx.git.run(['ls-tree', sub])).trim() === ''
    if (empty) entries.delete(dir)
    else entries.set(dir, { mode: '040000', type: 'tree', oid: sub })
  }
  const input = [...entries].map(([name, e]) => `${e.mode} ${e.type} ${e.oid}\t${name}\0`).join('')
  return (await ctx.git.run(['mktree', '-z'], { input })).trim()
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

/**
 * Merges the remote's version into this instance's and records it on the local ref (compare-and-
 * swap); when the result is the remote's text the remote's commit is taken, so instances holding
 * the same revocations hold the same commit. Returns true when the local ref changed.
 */
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
