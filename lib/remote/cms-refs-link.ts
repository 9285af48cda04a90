/**
 * Syncs `refs/cms/*` with the remote on a queue of its own (it never touches HEAD, the index or the
 * working tree, so publishes never wait behind it): writes ask for a debounced push; a sync
 * fetches, takes the remote's refs in and pushes what is ahead with a lease (cms-refs-sync.ts).
 */
import type { Logger } from 'pino'
import { KeyedLock as Queue } from '../storage/keyed-lock.js'
import { fetchCmsRefs, listRefs, type RemoteContext } from './remote-context.js'
import { adoptCmsRefs, pushCmsRefs, syncSharedDocument, type SharedDocument } from './cms-refs-sync.js'

/**
 * How long after a write of `refs/cms/*` their push starts: writes meanwhile travel in the same
 * push, and the host has them within this plus one push (CONTRACT 18: within 5 s).
 */
export const CMS_REFS_PUSH_DELAY_MS = 1000

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
  readonly #queue = new Queue()
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
        await this.#syncShared((await this.#listing()).tips)
        if (!await this.#push()) await this.#syncNow(true)
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
    const step = this.#step(async () => { this.#waiting = null; await this.#syncNow(true) })
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

  async #syncNow (fetch: boolean): Promise<void> {
    if (fetch) {
      try {
        await fetchCmsRefs(this.#ctx)
      } catch (err) {
        this.#opts.log.warn({ error: (err as Error).message }, 'could not fetch refs/cms from the git remote')
        this.schedulePush()
        return
      }
    }
    const refs = await this.#listing()
    // Nothing moved on either side since a sync that left nothing to do: skip the dozen git
    // processes of adopt/merge/push (a write schedules its own push).
    if (fetch && refs.text === this.#settled) return
    this.#settled = null
    await this.#flushHistory()
    const shared = await this.#syncShared(refs.tips)
    const adopted = await adoptCmsRefs(this.#ctx, new Set((this.#opts.shared ?? []).map(d => d.name))).catch((err: Error) => { this.#opts.log.warn({ error: err.message }, 'could not adopt refs/cms from the remote'); return null })
    const pushed = await this.#push()
    if (shared && adopted !== null && adopted.retry.length === 0 && pushed) this.#settled = (await this.#listing()).text
  }

  /** Every local refs/cms ref and the remote's as last fetched, in one git process. */
  async #listing (): Promise<{ text: string, tips: Map<string, string> }> {
    const tips = await listRefs(this.#ctx.git, 'refs/cms/', this.#ctx.cmsTracking)
    return { text: JSON.stringify([...tips]), tips }
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
  async #syncShared (tips: Map<string, string>): Promise<boolean> {
    let ok = true
    for (const doc of this.#opts.shared ?? []) {
      const known = { ours: tips.get(`refs/cms/${doc.name}`) ?? null, theirs: tips.get(`${this.#ctx.cmsTracking}${doc.name}`) ?? null }
      await syncSharedDocument(this.#ctx, doc, known).catch((err: Error) => { ok = false; this.#opts.log.warn({ ref: `refs/cms/${doc.name}`, error: err.message }, 'could not merge a shared refs/cms document') })
    }
    return ok
  }

  /** Waits for history appends in flight before refs/cms/* are compared, adopted or pushed. */
  async #flushHistory (): Promise<void> {
    await this.#opts.beforeCmsRefs?.().catch((err: Error) => { this.#opts.log.warn({ error: err.message }, 'could not finish history writes before syncing refs/cms') })
  }
}
