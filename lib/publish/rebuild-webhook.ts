/**
 * The site's rebuild webhook: after a publish, one signed JSON request to the configured URL. A
 * failed call keeps the request as a receipt under `.git/cms/` so it can be resent later
 * (`{ retryRebuild: true }`) without republishing anything.
 */
import { readFile, rm } from 'node:fs/promises'
import { createHmac } from 'node:crypto'
import path from 'node:path'
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import { writeFileAtomic } from '../storage/atomic-write.js'
import type { RebuildOutcome } from '../api-shapes.js'

/** The webhook body (the config's deploymentId is added to it). */
interface RebuildPayload {
  event: 'publish'
  commit?: string
  published: Array<{ collection: string, id: string, revision: number, deleted: boolean }>
}

interface Receipt { version: 1, url: string, method: 'POST' | 'PUT', body: string, failedAt: number, error: string }

/** The config the webhook's URL, method and secret come from. */
export interface RebuildWebhookOptions {
  config: Config
  stateDir: string
  log: Logger
  /** Request timeout (default 10 s). */
  timeoutMs?: number
}

/** Sends the rebuild request and keeps a receipt when it fails. */
export class RebuildWebhook {
  readonly #hook: NonNullable<Config['delivery']['publish']> | null
  readonly #receiptFile: string
  readonly #log: Logger
  readonly #timeoutMs: number

  constructor (opts: RebuildWebhookOptions) {
    this.#hook = opts.config.delivery.publish ?? null
    this.#receiptFile = path.join(opts.stateDir, 'rebuild-receipt.json')
    this.#log = opts.log
    this.#timeoutMs = opts.timeoutMs ?? 10_000
  }

  /** Sends the publish event. */
  async send (payload: RebuildPayload): Promise<RebuildOutcome> {
    const hook = this.#hook
    if (hook === null) return { rebuild: { triggered: false, ok: false } }
    const body = JSON.stringify({ ...payload, ...(hook.deploymentId !== undefined ? { deploymentId: hook.deploymentId } : {}) })
    return await this.#deliver(hook.webhookUrl, hook.method ?? 'POST', body)
  }

  /** Resends the retained request, if any. */
  async retry (): Promise<RebuildOutcome> {
    const receipt = await this.#readReceipt()
    if (receipt === null) return { rebuild: { triggered: false, ok: false }, retryAvailable: false }
    return await this.#deliver(receipt.url, receipt.method, receipt.body)
  }

  /** Whether a failed request is waiting to be resent. */
  async hasReceipt (): Promise<boolean> {
    return (await this.#readReceipt()) !== null
  }

  async #deliver (url: string, method: 'POST' | 'PUT', body: string): Promise<RebuildOutcome> {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'git-cms' }
    const secret = this.#hook?.secret
    if (secret !== undefined) headers['x-cms-signature'] = 'sha256=' + createHmac('sha256', secret).update(body, 'utf8').digest('hex')
    let error: string | null = null
    try {
      const res = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(this.#timeoutMs), redirect: 'manual' })
      await res.arrayBuffer().catch(() => {})
      if (res.status < 200 || res.status > 299) error = `webhook answered ${res.status}`
    } catch (err) {
      error = (err as Error).name === 'TimeoutError' ? `webhook timed out after ${this.#timeoutMs} ms` : `webhook call failed: ${(err as Error).message}`
    }
    if (error === null) {
      await rm(this.#receiptFile, { force: true })
      return { rebuild: { triggered: true, ok: true } }
    }
    this.#log.warn({ error }, 'rebuild webhook failed; kept a receipt for retryRebuild')
    const receipt: Receipt = { version: 1, url, method, body, failedAt: Date.now(), error }
    try {
      await writeFileAtomic(this.#receiptFile, JSON.stringify(receipt) + '\n')
      return { rebuild: { triggered: true, ok: false }, retryAvailable: true }
    } catch (err) {
      return { rebuild: { triggered: true, ok: false }, retryAvailable: false, receiptError: (err as Error).message }
    }
  }

  async #readReceipt (): Promise<Receipt | null> {
    const parsed = await readFile(this.#receiptFile, 'utf8').then(text => JSON.parse(text) as Receipt | null).catch(() => null)
    return parsed?.version === 1 && typeof parsed.body === 'string' && typeof parsed.url === 'string' ? parsed : null
  }
}
