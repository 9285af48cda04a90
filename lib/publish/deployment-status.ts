/**
 * Deployment status (CONTRACT 9): the site's build publishes a small JSON file (`{ commit }`); the
 * deployment is `live` only when that commit is the last one git-cms published, `pending` when it
 * is an older one, and `unknown` when it cannot be read or nothing was published yet.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { Config } from '../config.js'
import { writeFileAtomic } from '../storage/atomic-write.js'
import { isAncestor } from '../storage/git-search.js'

/** What `GET /deployment` reports about the site's build. */
export type DeploymentReport =
  | { configured: false, state: 'unknown' }
  | { configured: true, target: string, state: 'live' | 'pending' | 'unknown', commit?: string, publishedCommit?: string, checkedAt: number }

/** Where the repository's git data, its state and the status URL are. */
export interface DeploymentStatusOptions {
  gitDir: string
  config: Config
  stateDir: string
  /** Timeout of the status request (default 5 s). */
  timeoutMs?: number
}

const SHA = /^[0-9a-f]{40}$/

/** Reads the deployment provider's status and compares it with what was published. */
export class DeploymentStatus {
  readonly #gitDir: string
  readonly #url: string | null
  readonly #target: string | null
  readonly #file: string
  readonly #timeoutMs: number

  constructor (opts: DeploymentStatusOptions) {
    this.#gitDir = opts.gitDir
    this.#url = opts.config.delivery.status?.url ?? null
    this.#target = opts.config.delivery.status?.target ?? this.#url
    this.#file = path.join(opts.stateDir, 'last-published.json')
    this.#timeoutMs = opts.timeoutMs ?? 5000
  }

  /** Remembers the commit of the latest publish. */
  async recordPublished (commit: string): Promise<void> {
    await writeFileAtomic(this.#file, JSON.stringify({ commit, at: Date.now() }) + '\n')
  }

  /** The normalized status. */
  async read (): Promise<DeploymentReport> {
    if (this.#url === null || this.#target === null) return { configured: false, state: 'unknown' }
    const checkedAt = Date.now()
    const recorded = await readFile(this.#file, 'utf8').then(text => JSON.parse(text) as { commit?: unknown } | null).catch(() => null)
    const published = typeof recorded?.commit === 'string' && SHA.test(recorded.commit) ? recorded.commit : null
    const base = { configured: true as const, target: this.#target, checkedAt, ...(published !== null ? { publishedCommit: published } : {}) }
    let commit: string | null = null
    try {
      const res = await fetch(this.#url, { signal: AbortSignal.timeout(this.#timeoutMs), headers: { accept: 'application/json' } })
      if (res.ok) {
        const body = await res.json() as { commit?: unknown, revision?: unknown }
        const reported = typeof body.commit === 'string' ? body.commit : typeof body.revision === 'string' ? body.revision : null
        if (reported !== null && SHA.test(reported.toLowerCase())) commit = reported.toLowerCase()
      }
    } catch {}
    if (commit === null) return { ...base, state: 'unknown' }
    if (published === null) return { ...base, state: 'unknown', commit }
    if (commit === published) return { ...base, state: 'live', commit }
    // git finds its repository from inside the git directory too.
    // A commit this repository does not hold is no publish of ours.
    const older = await isAncestor(this.#gitDir, commit, published).catch(() => false)
    return { ...base, state: older ? 'pending' : 'unknown', commit }
  }
}
