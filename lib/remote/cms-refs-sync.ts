/**
 * `refs/cms/*` between the service and its remote, on a queue of their own that publishes never wait
 * behind: writes ask for a debounced push; a sync fetches, adopts the remote refs this site signed
 * that are ahead, merges `refs/cms/history` and the shared documents when both sides moved (other
 * refs are kept and reported), and pushes what is ahead with a lease (docs/ARCHITECTURE.md).
 */
import { rm } from 'node:fs/promises'
import path from 'node:path'
import type { Logger } from 'pino'
import { parseHistory, unionSnapshots, type Snapshot } from '../storage/history-store.js'
import { isAncestor } from '../storage/git-search.js'
import { KeyedLock } from '../storage/keyed-lock.js'
import { commitSignedRecord, fetchCmsRefs, listRefs, swapRef, type RemoteContext } from './remote-context.js'

/** Delay from a write of `refs/cms/*` to their push (CONTRACT 18: on the host within 5 s). */
const CMS_REFS_PUSH_DELAY_MS = 1000

/** What the link needs beside the remote context. */
export interface CmsRefsLinkOptions {
  log: Logger
  /** Waits for history appends in flight, so what travels holds every acknowledged save. */
  beforeCmsRefs?: () => Promise<void>
  /** Documents merged between the instances of the site on their own refs (the revoked sessions). */
  shared?: SharedDocument[]
  /** Told of every push of refs/cms and whether it succeeded (metrics). */
  onPush?: (kind: 'cms_refs', ok: boolean) => void
}

/** The refs/cms half of the remote link; created once the remote is known. */
export class CmsRefsLink {
  readonly #ctx: RemoteContext
  readonly #opts: CmsRefsLinkOptions
  readonly #queue = new KeyedLock()
  #pushTimer: NodeJS.Timeout | null = null
  /** Pushes refused in a row (0 after one that went through). */
  #refusedPushes = 0
  /** The refs listing after the last sync that left nothing to do (null: the next sync does it all). */
  #settled: string | null = null
  /** A sync step queued and not started yet. */
  #waiting: Promise<void> | null = null
  #closed = false

  constructor (ctx: RemoteContext, opts: CmsRefsLinkOptions) {
    this.#ctx = ctx
    this.#opts = opts
  }

  /**
   * Asks for `refs/cms/*` to reach the remote: one push CMS_REFS_PUSH_DELAY_MS after the first
   * write that asked; a refused push syncs and retries, backing off 1 s, 2 s, 4 s ... up to a minute.
   */
  schedulePush (): void {
    if (this.#closed || this.#pushTimer !== null) return
    const delay = Math.min(CMS_REFS_PUSH_DELAY_MS * 2 ** this.#refusedPushes, 60_000)
    this.#pushTimer = setTimeout(() => {
      this.#pushTimer = null
      void this.#step(async () => {
        await this.#flushHistory()
        await this.#syncShared(await bothSides(this.#ctx))
        if (!await this.#push()) await this.#syncNow()
      })
    }, delay)
    this.#pushTimer.unref()
  }

  /** Pushes what is ahead now (after a publish's push), without waiting for it. */
  pushSoon (): void {
    void this.#step(async () => { await this.#flushHistory(); await this.#push() })
  }

  /**
   * Fetches the remote's refs/cms, takes them in and pushes what is ahead; calls while one waits
   * share it. Failures are logged and retried later.
   */
  async sync (): Promise<void> {
    if (this.#waiting !== null) { await this.#waiting; return }
    const step = this.#step(async () => { this.#waiting = null; await this.#syncNow() })
    this.#waiting = step
    await step
  }

  /** Stops the push timer and waits for the step in flight. */
  async close (): Promise<void> {
    this.#closed = true
    if (this.#pushTimer !== null) clearTimeout(this.#pushTimer)
    this.#pushTimer = null
    await this.#queue.run('refs', async () => {})
  }

  async #step (fn: () => Promise<void>): Promise<void> {
    await this.#queue.run('refs', async () => {
      if (!this.#closed) await fn()
    }).catch((err: Error) => { this.#opts.log.warn({ error: err.message }, 'could not sync refs/cms') })
  }

  async #syncNow (): Promise<void> {
    try {
      await fetchCmsRefs(this.#ctx)
    } catch (err) {
      this.#opts.log.warn({ error: (err as Error).message }, 'could not fetch refs/cms from the git remote')
      this.schedulePush()
      return
    }
    const sides = await bothSides(this.#ctx)
    // Nothing moved on either side since a sync that left nothing to do: skip the dozen git
    // processes of adopt/merge/push (a write schedules its own push).
    if (sides.text === this.#settled) return
    this.#settled = null
    await this.#flushHistory()
    const shared = await this.#syncShared(sides)
    const adopted = await adoptCmsRefs(this.#ctx, new Set((this.#opts.shared ?? []).map(d => d.name))).catch((err: Error) => { this.#opts.log.warn({ error: err.message }, 'could not adopt refs/cms from the remote'); return false })
    const pushed = await this.#push()
    if (shared && adopted && pushed) this.#settled = (await bothSides(this.#ctx)).text
  }

  /** Pushes `refs/cms/*`; false when the remote refused (it moved) or some ref is diverged. */
  async #push (): Promise<boolean> {
    const outcome = await pushCmsRefs(this.#ctx).catch((err: Error) => ({ error: err.message }))
    if ('error' in outcome) {
      this.#opts.onPush?.('cms_refs', false)
      this.#refusedPushes = Math.min(this.#refusedPushes + 1, 6)
      // Whichever step was refused (after a publish, a sync or a write), it is tried again.
      this.schedulePush()
      return false
    }
    if (outcome.pushed.length > 0) this.#opts.onPush?.('cms_refs', true)
    this.#refusedPushes = 0
    return this.#ctx.state.report.divergedRefs.length === 0
  }

  /** Merges the shared documents with the remote's versions as last fetched; false when one could not be. */
  async #syncShared (sides: { local: Map<string, string>, remote: Map<string, string> }): Promise<boolean> {
    let ok = true
    for (const doc of this.#opts.shared ?? []) {
      const known = { ours: sides.local.get(doc.name) ?? null, theirs: sides.remote.get(doc.name) ?? null }
      await syncSharedDocument(this.#ctx, doc, known).catch((err: Error) => { ok = false; this.#opts.log.warn({ ref: `refs/cms/${doc.name}`, error: err.message }, 'could not merge a shared refs/cms document') })
    }
    return ok
  }

  /** Waits for history appends in flight before refs/cms/* are compared, adopted or pushed. */
  async #flushHistory (): Promise<void> {
    await this.#opts.beforeCmsRefs?.().catch((err: Error) => { this.#opts.log.warn({ error: err.message }, 'could not finish history writes before syncing refs/cms') })
  }
}

/** The local refs under refs/cms/ and the remote's as last fetched, by their name under refs/cms/ (`text` tells two listings apart). */
async function bothSides (ctx: RemoteContext): Promise<{ local: Map<string, string>, remote: Map<string, string>, text: string }> {
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
async function adoptCmsRefs (ctx: RemoteContext, merged: ReadonlySet<string>): Promise<boolean> {
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
async function pushCmsRefs (ctx: RemoteContext): Promise<{ pushed: string[] } | { error: string }> {
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
async function syncSharedDocument (ctx: RemoteContext, doc: SharedDocument, tips: { ours: string | null, theirs: string | null }): Promise<boolean> {
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
