/**
 * The service's link to its git remote (CONTRACT 13), owned by `createCms`: finishes a push a crash
 * interrupted, fetches (interval, sync webhook, before each publish), fast-forwards upstream changes,
 * pushes publish commits and `refs/cms/*`, and keeps the report the Studio and `GET /deployment`
 * show. One step at a time on its own queue, in git child processes; reads never wait for it.
 */
import type { RecordSigner } from '../storage/record-signature.js'
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import type { KeyedLock } from '../storage/keyed-lock.js'
import type { ContentStore } from '../storage/content-store.js'
import { KeyedLock as Queue } from '../storage/keyed-lock.js'
import { GitRunner } from './git-remote.js'
import { SyncState, type SyncReport, type PublishedRef } from './sync-state.js'
import type { RemoteContext } from './remote-context.js'
import { fetchUpstream, fastForward } from './upstream-sync.js'
import { pushHead, type PushOutcome } from './push-publish.js'
import { adoptCmsRefs, pushCmsRefs } from './cms-refs-sync.js'
import { syncSharedDocument, type SharedDocument } from './shared-document-ref.js'
import { currentBranch, isAncestor, resolveCommit } from './git-queries.js'

/** What asked for a sync (logged). */
export type SyncReason = 'start' | 'interval' | 'webhook' | 'publish' | 'manual'

/** What `createCms` hands the remote link. */
export interface RemoteSyncOptions {
  repoDir: string
  stateDir: string
  config: Config
  log: Logger
  locks: KeyedLock
  content: ContentStore
  /** Whether publishes make commits (`CMS_GIT_ON_PUBLISH=true`); pushes need them. */
  gitOnPublish: boolean
  /** Signs and checks refs/cms records: a fetched ref is adopted only when its tip is signed by this site. */
  signer: RecordSigner
  env?: NodeJS.ProcessEnv
  /**
   * Announces pushed publishes to the rebuild webhook (for a push that completes later: a retry,
   * or the push finished at start after a crash).
   */
  announce?: (commit: string, published: PublishedRef[]) => Promise<void>
  /**
   * Called before `refs/cms/*` are adopted or pushed: waits for history appends in flight, so
   * what travels holds every acknowledged save.
   */
  beforeCmsRefs?: () => Promise<void>
  /** Documents merged between the instances of the site on their own refs (the revoked sessions). */
  shared?: SharedDocument[]
  /** Told of every push and whether it succeeded (metrics). */
  onPush?: (kind: 'publish' | 'cms_refs', ok: boolean) => void
}

/**
 * How long after a write of `refs/cms/*` their push starts: writes meanwhile travel in the same
 * push, and the host has them within this plus one push (CONTRACT 18: within 5 s).
 */
export const CMS_REFS_PUSH_DELAY_MS = 1000

/** The link to the git remote; inert (`enabled: false`) without `git.remote`. */
export class RemoteSync {
  readonly enabled: boolean
  readonly pushOnPublish: boolean
  readonly state: SyncState
  readonly #opts: RemoteSyncOptions
  readonly #git: GitRunner
  readonly #queue = new Queue()
  #ctx: RemoteContext | null = null
  #timer: NodeJS.Timeout | null = null
  #pushTimer: NodeJS.Timeout | null = null
  /** Pushes of refs/cms/* refused in a row (0 after one that went through). */
  #refusedPushes = 0
  #queued: Promise<SyncReport> | null = null
  #closed = false

  constructor (opts: RemoteSyncOptions) {
    this.#opts = opts
    const { git } = opts.config
    this.enabled = git.remote !== null
    this.pushOnPublish = this.enabled && git.pushOnPublish && opts.gitOnPublish
    this.state = new SyncState(opts.stateDir, git.remote, git.branch)
    this.#git = new GitRunner({ baseDir: opts.repoDir, ...(opts.env !== undefined ? { env: opts.env } : {}) })
  }

  /**
   * Resolves the remote and branch, finishes an interrupted push (in the background) and starts
   * the fetch interval.
   * @returns resolves when the remote is known (not when the first sync is done)
   */
  async start (): Promise<void> {
    if (!this.enabled) return
    const { git } = this.#opts.config
    const remote = git.remote!
    let url: string
    try {
      url = (await this.#git.run(['remote', 'get-url', remote])).trim()
    } catch {
      this.state.set('error', `The git remote '${remote}' does not exist in this repository (git remote add ${remote} <url>).`)
      this.#opts.log.error({ remote }, 'git.remote names no remote of this repository; not syncing')
      return
    }
    this.#git.rememberUrl(url)
    const branch = git.branch ?? await currentBranch(this.#git)
    if (branch === null) {
      this.state.set('error', 'HEAD is detached and git.branch is not set; not syncing.')
      return
    }
    this.state.report.branch = branch
    this.#ctx = {
      git: this.#git,
      remote,
      branch,
      tracking: `refs/remotes/${remote}/${branch}`,
      cmsTracking: `refs/cms-upstream/${remote}/`,
      state: this.state,
      log: this.#opts.log,
      locks: this.#opts.locks,
      content: this.#opts.content,
      contentDir: this.#opts.config.contentDir,
      signer: this.#opts.signer
    }
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

  /**
   * Stops the interval and waits for the step in flight.
   * @returns resolves when idle
   */
  async close (): Promise<void> {
    this.#closed = true
    if (this.#timer !== null) clearInterval(this.#timer)
    this.#timer = null
    if (this.#pushTimer !== null) clearTimeout(this.#pushTimer)
    this.#pushTimer = null
    await this.#queue.run('remote', async () => {})
  }

  /**
   * Asks for `refs/cms/*` (drafts, history, revocations) to reach the remote soon: one push
   * CMS_REFS_PUSH_DELAY_MS after the first write that asked, carrying every write made until it
   * starts, whatever `pullInterval` is. A push refused because the remote moved fetches, adopts
   * and pushes again at once.
   */
  schedulePush (): void {
    if (this.#ctx === null || this.#closed || !this.#opts.config.git.pushRefs || this.#pushTimer !== null) return
    // After refused pushes (another instance pushing the same refs, an unreachable host) the next
    // try waits longer: 1 s, 2 s, 4 s ... at most a minute.
    const delay = Math.min(CMS_REFS_PUSH_DELAY_MS * 2 ** this.#refusedPushes, 60_000)
    this.#pushTimer = setTimeout(() => {
      this.#pushTimer = null
      void this.#queue.run('remote', async () => {
        if (this.#closed || this.#ctx === null) return
        await this.#flushHistory()
        await this.#syncShared(this.#ctx)
        // Refused (the remote moved): fetch, adopt or merge, push again.
        if (!await this.#pushRefs(this.#ctx)) await this.#syncNow('push')
      }).catch((err: Error) => { this.#opts.log.warn({ error: err.message }, 'could not push refs/cms') })

    }, delay)
    this.#pushTimer.unref()
  }

  /** Merges the shared documents with the remote's versions as last fetched. */
  async #syncShared (ctx: RemoteContext): Promise<void> {
    for (const doc of this.#opts.shared ?? []) {
      await syncSharedDocument(ctx, doc).catch((err: Error) => { this.#opts.log.warn({ ref: `refs/cms/${doc.name}`, error: err.message }, 'could not merge a shared refs/cms document') })
    }
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
    return this.state.report.divergedRefs.length === 0
  }

  /**
   * Runs work that touches HEAD, the index or the working tree (a publish commit) between remote
   * steps, never during one.
   * @param fn the work
   * @returns what fn returns
   */
  async exclusive<T> (fn: () => Promise<T>): Promise<T> {
    return await this.#queue.run('remote', fn)
  }

  /**
   * Fetches and brings upstream changes in (and, at start, pushes what a crash left unpushed).
   * Calls while one is waiting share it.
   * @param reason what asked for it (logged)
   * @returns the report afterwards
   */
  async sync (reason: SyncReason): Promise<SyncReport> {
    if (this.#ctx === null || this.#closed) return this.state.report
    if (this.#queued !== null) return await this.#queued
    const run = this.#queue.run('remote', async () => {
      this.#queued = null
      if (this.#closed) return this.state.report
      await this.#syncNow(reason)
      return this.state.report
    })
    this.#queued = run
    return await run
  }

  /**
   * The sync before a publish, waited for at most `waitMs` (an unreachable host must not hold up a
   * publish; the sync goes on in the background and its fast-forward takes the entry locks).
   * @param waitMs the longest wait (default 10 s)
   * @returns resolves when synced or when the wait is over
   */
  async beforePublish (waitMs = 10_000): Promise<void> {
    if (this.#ctx === null) return
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<void>(resolve => { timer = setTimeout(resolve, waitMs) })
    await Promise.race([this.sync('publish').then(() => {}, () => {}), timeout])
    clearTimeout(timer)
  }

  /**
   * Makes a publish commit and pushes it, in one step of the queue: the pending push is recorded
   * before the commit (so a kill between commit and push is finished at the next start), the push
   * follows it, and nothing else touches HEAD in between.
   * @param published the entries of this publish
   * @param commit makes the commit (the committer)
   * @returns the commit result, the push outcome (null when pushes are off or nothing was committed)
   *   and the entries the push delivered (to announce to the rebuild webhook)
   */
  async commitAndPush<T extends { commit: string | null } | { commitError: string }> (published: PublishedRef[], commit: () => Promise<T>): Promise<{ result: T, push: PushOutcome | null, delivered: PublishedRef[] }> {
    if (!this.pushOnPublish) return { result: await this.exclusive(commit), push: null, delivered: [] }
    return await this.#queue.run('remote', async () => {
      const earlier = await this.state.pending()
      await this.state.addPending(published)
      const result = await commit()
      const made = 'commit' in result && result.commit !== null
      if (!made && earlier === null) {
        await this.state.clearPending()
        return { result, push: null, delivered: [] }
      }
      const { outcome, delivered } = await this.#push()
      return { result, push: outcome, delivered }
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

  /**
   * Whether a push failed and can be retried.
   * @returns true when a failed pending push exists
   */
  async retryAvailable (): Promise<boolean> {
    return this.pushOnPublish && (await this.state.pending())?.error !== undefined
  }

  /** Pushes HEAD; on success forgets the pending push and gives the entries it delivered. */
  async #push (): Promise<{ outcome: PushOutcome, delivered: PublishedRef[] }> {
    const ctx = this.#ctx
    if (ctx === null) {
      const error = this.state.report.message
      await this.state.failPending(error)
      return { outcome: { ok: false, error }, delivered: [] }
    }
    const outcome = await pushHead(ctx)
    this.#opts.onPush?.('publish', outcome.ok)
    if (!outcome.ok) {
      await this.state.failPending(outcome.error)
      if (this.state.report.state !== 'diverged' && this.state.report.state !== 'error') this.state.set('ahead', 'A publish commit waits on this server: its push failed (Retry push sends it).')
      this.#opts.log.warn({ error: outcome.error }, 'push of the publish commit failed; it stays on this server (retryPush sends it)')
      return { outcome, delivered: [] }
    }
    const pending = await this.state.pending()
    await this.state.clearPending()
    this.state.report.lastPush = { at: Date.now(), commit: outcome.commit }
    this.state.report.localCommit = outcome.commit
    this.state.report.upstreamCommit = outcome.commit
    this.state.set('ok', 'In sync with the remote.')
    // History and drafts follow on the queue, after the response (they are not what a rebuild needs).
    if (this.#opts.config.git.pushRefs) void this.#queue.run('remote', async () => { await this.#flushHistory(); await this.#pushRefs(ctx) }).catch(() => {})
    return { outcome, delivered: pending?.published ?? [] }
  }

  /** Waits for history appends in flight before refs/cms/* are compared, adopted or pushed. */
  async #flushHistory (): Promise<void> {
    await this.#opts.beforeCmsRefs?.().catch((err: Error) => { this.#opts.log.warn({ error: err.message }, 'could not finish history writes before syncing refs/cms') })
  }

  /** A push from the sync itself (at start, after a crash): it announces what it delivered. */
  async #pushAndAnnounce (): Promise<void> {
    const { outcome, delivered } = await this.#push()
    if (outcome.ok && delivered.length > 0) await this.#opts.announce?.(outcome.commit, delivered).catch(() => {})
  }

  async #syncNow (reason: SyncReason | 'push'): Promise<void> {
    const ctx = this.#ctx!
    const { report } = this.state
    let fetched: { previous: string | null, upstream: string | null }
    try {
      // Before a publish only the branch matters (refs/cms/* follow the publish's push).
      fetched = await fetchUpstream(ctx, this.#opts.config.git.pushRefs && reason !== 'publish')
      report.lastFetchAt = Date.now()
      report.lastFetchError = null
    } catch (err) {
      report.lastFetchError = (err as Error).message
      this.state.set('error', `Could not fetch from ${ctx.remote}: ${report.lastFetchError}`)
      this.#opts.log.warn({ reason, error: report.lastFetchError }, 'fetch from the git remote failed')
      return
    }
    const { previous, upstream } = fetched
    report.upstreamCommit = upstream
    const head = await resolveCommit(ctx.git, 'HEAD')
    report.localCommit = head
    if (head === null) return
    if (upstream !== null && previous !== null && !await isAncestor(ctx.git, previous, upstream)) {
      await this.state.setDiverged({ upstream, previous, local: head, at: Date.now() })
      this.#opts.log.error({ upstream, previous, local: head }, 'the remote branch was rewritten (force push); not merged')
    }
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
    } else if (await isAncestor(ctx.git, head, upstream)) {
      // Taking the remote's history loses nothing of ours, even after a rewrite.
      if (diverged !== null) await this.state.clearDiverged()
      try {
        const paths = await fastForward(ctx, head, upstream)
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
    } else if (await isAncestor(ctx.git, upstream, head)) {
      this.state.set('ahead', 'This server has commits the remote does not (they were not made by a publish, so they are not pushed).')
    } else {
      this.state.set('diverged', `This server's branch and ${ctx.remote}/${ctx.branch} have both moved; nothing is merged silently.`)
    }
    if (this.#opts.config.git.pushRefs && reason !== 'publish') {
      await this.#flushHistory()
      await this.#syncShared(ctx)
      await adoptCmsRefs(ctx, new Set((this.#opts.shared ?? []).map(d => d.name))).catch((err: Error) => { this.#opts.log.warn({ error: err.message }, 'could not adopt refs/cms from the remote') })
      await this.#pushRefs(ctx)
    }
  }
}
