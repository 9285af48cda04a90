/**
 * What the service knows about its remote: the in-memory report plus two crash-safe records in
 * `.git/cms/`: `pending-push.json` (a publish commit not yet pushed) and `upstream-diverged.json`
 * (the remote branch was rewritten; nothing merges or pushes until it is linear again).
 */
import { readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { writeFileAtomic } from '../storage/atomic-write.js'
import type { PublishedRef, SyncReport, SyncStateName } from '../api-shapes.js'

/** A publish commit waiting for its push (and its rebuild webhook). */
export interface PendingPush {
  version: 1
  /** Entries published since the last successful push (the webhook announces them after it). */
  published: PublishedRef[]
  /** Why the last attempt failed (redacted); absent before the first attempt. */
  error?: string
}

/** The remote branch was rewritten (a force push): recorded until the histories are linear again. */
export interface DivergedRecord { version: 1, upstream: string, previous: string, local: string | null, at: number }

const MAX_PUBLISHED = 1000

/** The remote state of one instance. */
export class SyncState {
  readonly #pendingFile: string
  readonly #divergedFile: string
  readonly report: SyncReport

  constructor (stateDir: string, remote: string | null, branch: string | null) {
    this.#pendingFile = path.join(stateDir, 'pending-push.json')
    this.#divergedFile = path.join(stateDir, 'upstream-diverged.json')
    this.report = {
      configured: remote !== null,
      remote,
      branch,
      state: remote === null ? 'off' : 'idle',
      message: remote === null ? 'No git remote is configured; publishes stay on this machine.' : 'Not synced yet.',
      lastFetchAt: null,
      lastFetchError: null,
      upstreamCommit: null,
      localCommit: null,
      lastPush: null,
      pushPending: false,
      pushError: null,
      divergedRefs: []
    }
  }

  /** Sets the state and its sentence. */
  set (state: SyncStateName, message: string): void {
    this.report.state = state
    this.report.message = message
  }

  /** The pending push, if any. */
  async pending (): Promise<PendingPush | null> {
    const parsed = await readFile(this.#pendingFile, 'utf8').then(text => JSON.parse(text) as PendingPush | null).catch(() => null)
    if (parsed === null || parsed.version !== 1 || !Array.isArray(parsed.published)) return null
    return parsed
  }

  /** Records (or extends) the pending push before a publish commit. */
  async addPending (published: PublishedRef[]): Promise<void> {
    await this.#updatePending(current => ({ published: [...(current?.published ?? []), ...published].slice(-MAX_PUBLISHED) }))
  }

  /** Notes why the pending push failed. */
  async failPending (error: string): Promise<void> {
    await this.#updatePending(() => ({ error }))
    this.report.pushError = error
  }

  async #updatePending (change: (current: PendingPush | null) => Partial<PendingPush>): Promise<void> {
    const current = await this.pending()
    const record: PendingPush = { published: [], ...current, version: 1, ...change(current) }
    await writeFileAtomic(this.#pendingFile, JSON.stringify(record) + '\n')
    this.report.pushPending = true
  }

  /** Forgets the pending push (it reached the remote, or there was nothing to push). */
  async clearPending (): Promise<void> {
    await rm(this.#pendingFile, { force: true })
    this.report.pushPending = false
    this.report.pushError = null
  }

  /** The recorded upstream rewrite, if any. */
  async diverged (): Promise<DivergedRecord | null> {
    const parsed = await readFile(this.#divergedFile, 'utf8').then(text => JSON.parse(text) as DivergedRecord | null).catch(() => null)
    return parsed !== null && parsed.version === 1 && typeof parsed.upstream === 'string' ? parsed : null
  }

  /** Records an upstream rewrite. */
  async setDiverged (record: Omit<DivergedRecord, 'version'>): Promise<void> {
    await writeFileAtomic(this.#divergedFile, JSON.stringify({ version: 1, ...record }) + '\n')
  }

  /** Forgets the upstream rewrite (the histories are linear again). */
  async clearDiverged (): Promise<void> {
    await rm(this.#divergedFile, { force: true })
  }
}
