/** The rate limit of password sign-in: at most 5 failed logins per client in a sliding 15 minutes. */
import { isIPv6 } from 'node:net'
import { LRUCache } from 'lru-cache'

const MAX_FAILURES = 5
const WINDOW_MS = 15 * 60 * 1000

/**
 * The key a client's failed logins count under: an IPv4 address as it is, an IPv6 address by its
 * /64 (one host is usually given a whole /64, so keying by /128 gives it 2^64 buckets).
 */
export function rateLimitKey (address: string): string {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0] ?? ''
  if (!isIPv6(bare)) return address
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)
  if (mapped !== null) return mapped[1]!
  // The URL parser writes it canonically: hex groups without leading zeros, an IPv4 tail as two groups.
  const [head = [], tail] = new URL(`http://[${bare}]`).hostname.slice(1, -1).split('::').map(part => part === '' ? [] : part.split(':'))
  const groups = tail === undefined ? head : [...head, ...Array<string>(8 - head.length - tail.length).fill('0'), ...tail]
  return groups.slice(0, 4).join(':') + '::/64'
}

/** Counts failed logins per client key. */
export class LoginRateLimiter {
  /** Client key -> times of its recent failures, oldest first. */
  readonly #failures: LRUCache<string, number[]>

  /** @param maxClients most clients remembered at once; the stalest are forgotten first */
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
