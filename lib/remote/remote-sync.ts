/**
 * The service's link to its git remote (CONTRACT 13): finishes a push a crash interrupted, fetches,
 * fast-forwards upstream changes, pushes publish commits and keeps the report `GET /deployment`
 * shows. Branch work and `refs/cms/*` work (cms-refs-sync.ts) run on separate queues that
 * publishes never wait behind for refs; reads never wait for either.
 */
import { setTimeout as delay } from 'node:timers/promises'
import type { Config } from '../config.js'
import type { PublishedRef, PushOutcome, SyncReport } from '../api-shapes.js'
import { KeyedLock } from '../storage/keyed-lock.js'
import { GitRunner } from '../git-runner.js'
import { SyncState } from './sync-state.js'
import { isAncestor } from '../storage/git-search.js'
import { changedPaths, fetchRefspec, fetchUpstream, moveHead, resolveCommit, type RemoteContext } from './remote-context.js'
import { dropLostPublish, pushHead } from './push-publish.js'
import { adoptCmsRefs, bothSides, pushCmsRefs, syncSharedDocument, type SharedDocument } from './cms-refs-sync.js'

/** What asked for a sync (logged). */
type SyncReason = 'start' | 'interval' | 'webhook' | 'publish'

/** Delay from a write of `refs/cms/*` to their push (CONTRACT 18: on the host within 5 s). */
const CMS_REFS_PUSH_DELAY_MS = 1000

/** What `createCms` hands the remote link (the parts every remote step shares are RemoteContext's). */
interface RemoteSyncOptions extends Pick<RemoteContext, 'repoDir' | 'stateDir' | 'log' | 'locks' | 'content' | 'signer'> {
  config: Config
  /** Whether publishes make commits (`CMS_GIT_ON_PUBLISH=true`); pushes need them. */
  gitOnPublish: boolean
  env: NodeJS.ProcessEnv
  /** Announces a push that completes later (a retry, or at start after a crash) to the rebuild webhook. */
  announce: (commit: string, published: PublishedRef[]) => Promise<void>
  /** Waits for history appends in flight, so the refs/cms that travel hold every acknowledged save. */
  beforeCmsRefs: () => Promise<void>
  /** Documents merged between the instances of the site on their own refs (the revoked sessions). */
  shared?: SharedDocument[]
  /** Told of every push and whether it succeeded (metrics). */
  onPush?: (kind: 'publish' | 'cms_refs', ok: boolean) => void
}

/** The link to the git remote; inert (`enabled: false`) without `git.remote`. */
export class RemoteSync {
  readonly enabled: boolean
  readonly pushOnPublish: boolean
  readonly state: SyncState
  readonly #opts: RemoteSyncOptions
  readonly #git: GitRunner
  /** Two queues: `remote` for the branch, `refs` for refs/cms/*. */
  readonly #queue = new KeyedLock()
  /** The step of each queue waiting to start (later syncs share it). */
  readonly #waiting = new Map<'remote' | 'refs', Promise<void>>()
  #ctx: RemoteContext | null = null
  /** The context of refs/cms steps (null until the remote is known, or with `git.pushRefs` off). */
  #refsCtx: RemoteContext | null = null
  #timer: NodeJS.Timeout | null = null
  #pushTimer: NodeJS.Timeout | null = null
  /** Pushes of refs/cms refused in a row (0 after one that went through). */
  #refusedPushes = 0
  /** The refs listing after the last refs/cms sync that left nothing to do (null: the next sync does it all). */
  #settled: string | null = null
  #closed = false

  constructor (opts: RemoteSyncOptions) {
    this.#opts = opts
    const { git } = opts.config
    this.enabled = git.remote !== null
    this.pushOnPublish = this.enabled && git.pushOnPublish && opts.gitOnPublish
    this.state = new SyncState(opts.stateDir, git.remote, git.branch)
    this.#git = new GitRunner({ baseDir: opts.repoDir, log: opts.log, env: opts.env })
  }

  /** Resolves the remote, finishes an interrupted push in the background, starts the fetch interval. */
  async start (): Promise<void> {
    if (!this.enabled) return
    const { git } = this.#opts.config
    const remote = git.remote!
    const url = await this.#git.run(['remote', 'get-url', remote]).then(out => out.trim(), () => null)
    if (url === null) {
      this.state.set('error', `The git remote '${remote}' does not exist in this repository (git remote add ${remote} <url>).`)
      this.#opts.log.error({ remote }, 'git.remote names no remote of this repository; not syncing')
      return
    }
    this.#git.rememberUrl(url)
    // The branch HEAD points at, unless configured ('' when HEAD is detached).
    const branch = git.branch ?? (await this.#git.run(['symbolic-ref', '--quiet', '--short', 'HEAD']).catch(() => '')).trim()
    if (branch === '') {
      this.state.set('error', 'HEAD is detached and git.branch is not set; not syncing.')
      return
    }
    this.state.report.branch = branch
    this.#ctx = {
      ...this.#opts,
      git: this.#git,
      remote,
      branch,
      tracking: `refs/remotes/${remote}/${branch}`,
      cmsTracking: `refs/cms-upstream/${remote}/`,
      state: this.state,
      contentDir: this.#opts.config.contentDir
    }
    if (git.pushRefs) this.#refsCtx = this.#ctx
    const pending = await this.state.pending()
    this.state.report.pushPending = pending !== null
    this.state.report.pushError = pending?.error ?? null
    // First sync (and a push a crash interrupted) after start, without holding up the listening line.
    void this.sync('start').catch(() => {})
    const seconds = git.pullInterval
    if (seconds > 0) {
      this.#timer = setInterval(() => { void this.sync('interval').catch(() => {}) }, seconds * 1000)
      this.#timer.unref()
    }
  }

  /** Stops the interval and the push timer, and waits for the steps in flight. */
  async close (): Promise<void> {
    this.#closed = true
    if (this.#timer !== null) clearInterval(this.#timer)
    if (this.#pushTimer !== null) clearTimeout(this.#pushTimer)
    await Promise.all([this.#queue.run('refs', async () => {}), this.#queue.run('remote', async () => {})])
  }

  /** Pushes `refs/cms/*` CMS_REFS_PUSH_DELAY_MS after the first write that asked; a refusal syncs and retries (backing off to a minute). */
  schedulePush (): void {
    const ctx = this.#refsCtx
    if (this.#closed || ctx === null || this.#pushTimer !== null) return
    const delay = Math.min(CMS_REFS_PUSH_DELAY_MS * 2 ** this.#refusedPushes, 60_000)
    this.#pushTimer = setTimeout(() => {
      this.#pushTimer = null
      void this.#refsStep(async () => {
        await this.#flushHistory()
        await this.#syncShared(ctx, await bothSides(ctx))
        if (!await this.#pushRefs(ctx)) await this.#syncRefs(ctx)
      })
    }, delay)
    this.#pushTimer.unref()
  }

  /** Fetches and takes in upstream changes (at start, pushes what a crash left) and, on its own queue, `refs/cms/*`. */
  async sync (reason: SyncReason): Promise<SyncReport> {
    if (this.#ctx === null || this.#closed) return this.state.report
    // Before a publish only the branch matters (refs/cms/* follow the publish's push).
    const ctx = this.#refsCtx
    const refs = reason === 'publish' || ctx === null ? undefined : this.#once('refs', async () => { await this.#syncRefs(ctx).catch(this.#refsFailed) })
    await Promise.all([this.#once('remote', async () => { await this.#syncNow(reason) }), refs])
    return this.state.report
  }

  /** Runs a step on a queue unless closed meanwhile; calls while one waits to start share it. */
  async #once (queue: 'remote' | 'refs', step: () => Promise<void>): Promise<void> {
    let waiting = this.#waiting.get(queue)
    if (waiting === undefined) {
      waiting = this.#queue.run(queue, async () => {
        this.#waiting.delete(queue)
        if (!this.#closed) await step()
      })
      this.#waiting.set(queue, waiting)
    }
    await waiting
  }

  /** The sync before a publish, waited for at most 10 s so an unreachable host does not hold up a publish. */
  async beforePublish (): Promise<void> {
    if (this.#ctx === null) return
    await Promise.race([this.sync('publish').then(() => {}, () => {}), delay(10_000, undefined, { ref: false })])
  }

  /**
   * Commits and pushes a publish in one queue step, recording the pending push first (a kill in between is finished
   * at the next start); a commit that lost a race to another instance is dropped (`lost`: the drafts go back).
   */
  async commitAndPush<T extends { commit: string | null } | { commitError: string }> (published: PublishedRef[], written: readonly string[], commit: () => Promise<T>): Promise<{ result: T, push: PushOutcome | null, delivered: PublishedRef[], lost: boolean }> {
    // The commit touches HEAD, the index and the working tree: between remote steps, never during one.
    if (!this.pushOnPublish) return { result: await this.#queue.run('remote', commit), push: null, delivered: [], lost: false }
    return await this.#queue.run('remote', async () => {
      const earlier = await this.state.pending()
      await this.state.addPending(published)
      const result = await commit()
      const made = 'commit' in result && result.commit !== null ? result.commit : null
      if (made === null && earlier === null) {
        await this.state.clearPending()
        return { result, push: null, delivered: [], lost: false }
      }
      const { outcome, delivered, lost } = await this.#push(made !== null && earlier === null ? { commit: made, written } : null)
      return { result, push: lost ? null : outcome, delivered, lost }
    })
  }

  /**
   * Pushes again what an earlier push left on this server (`{ retryPush: true }`).
   * @returns the push outcome (null when nothing waits) and the entries it delivered
   */
  async retryPush (): Promise<{ push: PushOutcome | null, delivered: PublishedRef[] }> {
    if (!this.pushOnPublish) return { push: null, delivered: [] }
    return await this.#queue.run('remote', async () => {
      if (await this.state.pending() === null) return { push: null, delivered: [] }
      const { outcome, delivered } = await this.#push()
      return { push: outcome, delivered }
    })
  }

  /** Whether a push failed and can be retried. */
  async retryAvailable (): Promise<boolean> {
    return this.pushOnPublish && (await this.state.pending())?.error !== undefined
  }

  /** Pushes HEAD; on success forgets the pending push and gives the entries it delivered. */
  async #push (droppable: { commit: string, written: readonly string[] } | null = null): Promise<{ outcome: PushOutcome, delivered: PublishedRef[], lost: boolean }> {
    const ctx = this.#ctx
    if (ctx === null) {
      const error = this.state.report.message
      await this.state.failPending(error)
      return { outcome: { ok: false, error }, delivered: [], lost: false }
    }
    const pushed = await pushHead(ctx)
    this.#opts.onPush?.('publish', pushed.ok)
    if ('overlap' in pushed && droppable !== null && await dropLostPublish(ctx, droppable.commit, pushed.upstream, droppable.written)) {
      await this.state.clearPending()
      this.state.report.localCommit = pushed.upstream
      this.state.set('ok', 'In sync with the remote.')
      return { outcome: { ok: false, error: pushed.error }, delivered: [], lost: true }
    }
    const outcome: PushOutcome = pushed.ok ? pushed : { ok: false, error: pushed.error }
    if (!outcome.ok) {
      await this.state.failPending(outcome.error)
      if (this.state.report.state !== 'diverged' && this.state.report.state !== 'error') this.state.set('ahead', 'A publish commit waits on this server: its push failed (Retry push sends it).')
      this.#opts.log.warn({ error: outcome.error }, 'push of the publish commit failed; it stays on this server (retryPush sends it)')
      return { outcome, delivered: [], lost: false }
    }
    const pending = await this.state.pending()
    await this.state.clearPending()
    this.state.report.lastPush = { at: Date.now(), commit: outcome.commit }
    this.state.report.localCommit = outcome.commit
    this.state.report.upstreamCommit = outcome.commit
    this.state.set('ok', 'In sync with the remote.')
    // History and drafts follow on their queue, after the response (they are not what a rebuild needs).
    const refsCtx = this.#refsCtx
    if (refsCtx !== null) void this.#refsStep(async () => { await this.#flushHistory(); await this.#pushRefs(refsCtx) })
    return { outcome, delivered: pending?.published ?? [], lost: false }
  }

  /** A push from the sync itself (at start, after a crash): it announces what it delivered. */
  async #pushAndAnnounce (): Promise<void> {
    const { outcome, delivered } = await this.#push()
    if (outcome.ok && delivered.length > 0) await this.#opts.announce(outcome.commit, delivered).catch(() => {})
  }

  async #syncNow (reason: SyncReason): Promise<void> {
    const ctx = this.#ctx!
    const { report } = this.state
    const head = await resolveCommit(ctx.git, 'HEAD')
    let upstream: string | null
    try {
      ({ upstream } = await fetchUpstream(ctx, head))
      report.lastFetchAt = Date.now()
      report.lastFetchError = null
    } catch (err) {
      report.lastFetchError = (err as Error).message
      this.state.set('error', `Could not fetch from ${ctx.remote}: ${report.lastFetchError}`)
      this.#opts.log.warn({ reason, error: report.lastFetchError }, 'fetch from the git remote failed')
      return
    }
    report.upstreamCommit = upstream
    report.localCommit = head
    if (head === null) return
    const diverged = await this.state.diverged()
    const pending = await this.state.pending()
    if (upstream === null) {
      if (pending !== null && reason === 'start') await this.#pushAndAnnounce()
      else this.state.set('ok', `The branch ${ctx.branch} does not exist on ${ctx.remote} yet; the next publish creates it.`)
    } else if (head === upstream) {
      if (diverged !== null) await this.state.clearDiverged()
      // Pushed, but the process stopped before it could forget the record.
      if (pending !== null && reason === 'start') await this.#pushAndAnnounce()
      this.state.set('ok', 'In sync with the remote.')
    } else if (await isAncestor(ctx.repoDir, head, upstream)) {
      // Taking the remote's history loses nothing of ours, even after a rewrite.
      if (diverged !== null) await this.state.clearDiverged()
      try {
        const paths = await changedPaths(ctx.git, head, upstream)
        // Refuses (and changes nothing) when a local change, committed or not, would be overwritten.
        await moveHead(ctx, ['merge', '--ff-only', '--no-stat', '--quiet', upstream], paths)
        report.localCommit = upstream
        this.state.set('ok', 'In sync with the remote.')
        this.#opts.log.info({ reason, from: head, to: upstream, files: paths.length }, 'fast-forwarded upstream changes')
      } catch (err) {
        this.state.set('blocked', `Upstream changes wait: they touch files this server changed and has not committed yet (${(err as Error).message.split('\n')[0] ?? ''}).`)
        this.#opts.log.warn({ reason, error: (err as Error).message }, 'could not fast-forward upstream changes')
      }
    } else if (diverged !== null) {
      this.state.set('diverged', `The remote branch ${ctx.branch} was rewritten (force push) and no longer contains this server's history. Nothing is merged or pushed until it is reconciled on the server (git reset --keep ${ctx.remote}/${ctx.branch}, or push this server's branch).`)
    } else if (pending !== null) {
      if (reason === 'start') await this.#pushAndAnnounce()
      else this.state.set('ahead', 'A publish commit has not reached the remote yet (Retry push sends it).')
    } else if (await isAncestor(ctx.repoDir, upstream, head)) {
      this.state.set('ahead', 'This server has commits the remote does not (they were not made by a publish, so they are not pushed).')
    } else {
      this.state.set('diverged', `This server's branch and ${ctx.remote}/${ctx.branch} have both moved; nothing is merged silently.`)
    }
  }

  /** A refs/cms step on its queue unless closed meanwhile; a failure is logged (a later step retries). */
  async #refsStep (step: () => Promise<void>): Promise<void> {
    await this.#queue.run('refs', async () => { if (!this.#closed) await step() }).catch(this.#refsFailed)
  }

  readonly #refsFailed = (err: Error): void => { this.#opts.log.warn({ error: err.message }, 'could not sync refs/cms') }

  /** Fetches the remote's refs/cms, takes them in and pushes what is ahead. */
  async #syncRefs (ctx: RemoteContext): Promise<void> {
    try {
      // Apart from the branch's fetch, so the two queues never update the same refs at once.
      await fetchRefspec(ctx, `+refs/cms/*:${ctx.cmsTracking}*`)
    } catch (err) {
      this.#opts.log.warn({ error: (err as Error).message }, 'could not fetch refs/cms from the git remote')
      this.schedulePush()
      return
    }
    const sides = await bothSides(ctx)
    // Nothing moved on either side since a sync that left nothing to do: skip adopt/merge/push.
    if (sides.text === this.#settled) return
    this.#settled = null
    await this.#flushHistory()
    const shared = await this.#syncShared(ctx, sides)
    const adopted = await adoptCmsRefs(ctx, new Set((this.#opts.shared ?? []).map(d => d.name))).catch((err: Error) => { this.#opts.log.warn({ error: err.message }, 'could not adopt refs/cms from the remote'); return false })
    const pushed = await this.#pushRefs(ctx)
    if (shared && adopted && pushed) this.#settled = (await bothSides(ctx)).text
  }

  /** Pushes `refs/cms/*`; false when the remote refused (it moved) or some ref is diverged. */
  async #pushRefs (ctx: RemoteContext): Promise<boolean> {
    const outcome = await pushCmsRefs(ctx).catch((err: Error) => ({ error: err.message }))
    if ('error' in outcome) {
      this.#opts.onPush?.('cms_refs', false)
      this.#refusedPushes = Math.min(this.#refusedPushes + 1, 6)
      // Whichever step was refused (after a publish, a sync or a write), it is tried again.
      this.schedulePush()
      return false
    }
    if (outcome.pushed.length > 0) this.#opts.onPush?.('cms_refs', true)
    this.#refusedPushes = 0
    return ctx.state.report.divergedRefs.length === 0
  }

  /** Merges the shared documents with the remote's versions as last fetched; false when one could not be. */
  async #syncShared (ctx: RemoteContext, sides: { local: Map<string, string>, remote: Map<string, string> }): Promise<boolean> {
    let ok = true
    for (const doc of this.#opts.shared ?? []) {
      const known = { ours: sides.local.get(doc.name) ?? null, theirs: sides.remote.get(doc.name) ?? null }
      await syncSharedDocument(ctx, doc, known).catch((err: Error) => { ok = false; this.#opts.log.warn({ ref: `refs/cms/${doc.name}`, error: err.message }, 'could not merge a shared refs/cms document') })
    }
    return ok
  }

  /** Waits for history appends in flight before refs/cms/* are compared, adopted or pushed. */
  async #flushHistory (): Promise<void> {
    await this.#opts.beforeCmsRefs().catch((err: Error) => { this.#opts.log.warn({ error: err.message }, 'could not finish history writes before syncing refs/cms') })
  }
}
