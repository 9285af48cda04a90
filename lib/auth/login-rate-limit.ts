/**
 * The login rate limit: at most 5 failed logins per client in a sliding 15-minute window, per
 * instance, in an LRU bounded by count; check and record run without an await between, so
 * parallel guesses cannot slip under the limit.
 */
import { LRUCache } from 'lru-cache'

const MAX_FAILURES = 5
const WINDOW_MS = 15 * 60 * 1000

/** Counts failed logins per client key. */
export class LoginRateLimiter {
  /** Client key -> times of its recent failures, oldest first. */
  readonly #failures: LRUCache<string, number[]>

  /**
   * @param maxClients most clients remembered at once; the stalest are forgotten first
   */
  constructor (maxClients = 10_000) {
    this.#failures = new LRUCache<string, number[]>({ max: maxClients })
  }

  /**
   * Whether a client is limited now.
   * @returns seconds until it may try again, or null when it may try now
   */
  retryAfter (key: string, now: number): number | null {
    const recent = this.#recent(key, now)
    if (recent.length < MAX_FAILURES) return null
    const oldest = recent[recent.length - MAX_FAILURES] ?? now
    return Math.max(1, Math.ceil((oldest + WINDOW_MS - now) / 1000))
  }

  /** Records a failed attempt. */
  recordFailure (key: string, now: number): void {
    // Only the newest MAX_FAILURES times can ever matter.
    this.#failures.set(key, [...this.#recent(key, now), now].slice(-MAX_FAILURES))
  }

  /** Forgets a client's failures (after a successful login). */
  reset (key: string): void {
    this.#failures.delete(key)
  }

  /** How many clients are remembered (for tests and metrics). */
  get size (): number {
    return this.#failures.size
  }

  #recent (key: string, now: number): number[] {
    const times = this.#failures.get(key)
    if (times === undefined) return []
    const recent = times.filter(ts => ts > now - WINDOW_MS)
    if (recent.length === 0) this.#failures.delete(key)
    return recent
  }
}
