/**
 * The login rate limit: at most 5 failed logins per client in a sliding 15-minute window, per
 * instance, in an LRU bounded by count; check and record run without an await between, so
 * parallel guesses cannot slip under the limit.
 */
import { LRUCache } from 'lru-cache'

/** Settings of a limiter. */
export interface LoginRateLimitOptions {
  /** Failures allowed in the window (default 5). */
  maxFailures?: number
  /** Window length in milliseconds (default 15 minutes). */
  windowMs?: number
  /** Most clients remembered at once (default 10 000); the stalest are forgotten first. */
  maxClients?: number
}

/** Counts failed logins per client key. */
export class LoginRateLimiter {
  readonly maxFailures: number
  readonly windowMs: number
  readonly maxClients: number
  /** Client key -> times of its recent failures, oldest first. */
  private readonly failures: LRUCache<string, number[]>

  /**
   * @param opts limits (defaults: 5 failures per 15 minutes, 10 000 clients)
   */
  constructor (opts: LoginRateLimitOptions = {}) {
    this.maxFailures = opts.maxFailures ?? 5
    this.windowMs = opts.windowMs ?? 15 * 60 * 1000
    this.maxClients = opts.maxClients ?? 10_000
    this.failures = new LRUCache<string, number[]>({ max: this.maxClients })
  }

  /**
   * Whether a client is limited now.
   * @returns seconds until it may try again, or null when it may try now
   */
  retryAfter (key: string, now: number): number | null {
    const recent = this.recent(key, now)
    if (recent.length < this.maxFailures) return null
    const oldest = recent[recent.length - this.maxFailures] ?? now
    return Math.max(1, Math.ceil((oldest + this.windowMs - now) / 1000))
  }

  /** Records a failed attempt. */
  recordFailure (key: string, now: number): void {
    const recent = this.recent(key, now)
    recent.push(now)
    // Only the newest maxFailures times can ever matter.
    if (recent.length > this.maxFailures) recent.splice(0, recent.length - this.maxFailures)
    this.failures.set(key, recent)
  }

  /** Forgets a client's failures (after a successful login). */
  reset (key: string): void {
    this.failures.delete(key)
  }

  /** How many clients are remembered (for tests and metrics). */
  get size (): number {
    return this.failures.size
  }

  private recent (key: string, now: number): number[] {
    const times = this.failures.get(key)
    if (times === undefined) return []
    const recent = times.filter(ts => ts > now - this.windowMs)
    if (recent.length === 0) this.failures.delete(key)
    return recent
  }
}
