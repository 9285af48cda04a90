/**
 * Password mode: one shared password checked in constant time, at most 5 failed logins per client in
 * a sliding 15 minutes; a session is a signed cookie (editorId random, or from the name given).
 */
import { isIPv6 } from 'node:net'
import { LRUCache } from 'lru-cache'
import { PasswordNotConfiguredError, RateLimitedError, UnauthorizedError } from '../errors.js'
import type { Identity } from '../config.js'
import { signSession, verifySession, boundEditorId, isBoundTo, sameSecret, SESSION_TTL_MS, type SessionClaims } from './session-cookie.js'
import type { RevokedSessions } from './revocations.js'
import { cleanEditorName, editorIdForName } from './identity.js'

const MAX_FAILURES = 5
const WINDOW_MS = 15 * 60 * 1000

/** The identity of a password-mode session. */
function editorIdentity (claims: SessionClaims): Identity {
  return { id: claims.editorId, name: claims.name ?? 'Editor', roles: ['editor'] }
}

/** Password login, session verification and logout; one per service. */
export type PasswordAuth = ReturnType<typeof passwordAuth>

/**
 * Builds password mode for one service: `login` throws 503 without a configured password, 429 while
 * the client is limited (whatever the password), 401 for a wrong one (counted; check, compare and
 * count run without an await, so parallel guesses are counted exactly); `identify` checks signature,
 * expiry, id grammar and revocation; `logout` revokes the session's id (persisted).
 * @param opts the password (null: no sign-in, and no session honoured), session secret, revocations and clock (tests)
 * @returns the password mode of the service
 */
export function passwordAuth (opts: { password: string | null, sessionSecret: string, revocations: RevokedSessions, now?: () => number }) {
  const { password, sessionSecret: secret, revocations } = opts
  const now = opts.now ?? Date.now
  const limiter = new LoginRateLimiter()
  const verify = (cookie: string | undefined): SessionClaims | null => {
    if (password === null || cookie === undefined || cookie === '') return null
    const at = now()
    const claims = verifySession(secret, cookie, at)
    // A session made under another password (CMS_EDIT_PASSWORD changed) has ended.
    if (claims === null || !isBoundTo(secret, password, claims.sid ?? claims.editorId)) return null
    if (revocations.has(claims.sid ?? claims.editorId, at)) return null
    return claims
  }
  return {
    enabled: password !== null,
    login: (submitted: string, clientKey: string, name = ''): { identity: Identity, cookie: string } => {
      if (password === null) throw new PasswordNotConfiguredError('Password sign-in is not configured: set CMS_EDIT_PASSWORD on the server')
      const at = now()
      const retryAfter = limiter.retryAfter(clientKey, at)
      if (retryAfter !== null) throw new RateLimitedError(retryAfter)
      if (!sameSecret(submitted, password)) {
        limiter.recordFailure(clientKey, at)
        throw new UnauthorizedError('Wrong password')
      }
      limiter.reset(clientKey)
      // The session's own id (the editorId, or a named sign-in's sid) carries the password's tag, so
      // a new CMS_EDIT_PASSWORD ends every older session (CONTRACT 17).
      const shown = cleanEditorName(name)
      const bound = boundEditorId(secret, password)
      const claims: SessionClaims = shown === ''
        ? { editorId: bound, exp: at + SESSION_TTL_MS }
        : { editorId: editorIdForName(shown), exp: at + SESSION_TTL_MS, name: shown, sid: bound }
      return { identity: editorIdentity(claims), cookie: signSession(secret, claims) }
    },
    identify: (cookie: string | undefined): Identity | null => {
      const claims = verify(cookie)
      return claims === null ? null : editorIdentity(claims)
    },
    logout: async (cookie: string | undefined): Promise<void> => {
      const claims = verify(cookie)
      if (claims !== null) await revocations.revoke(claims.sid ?? claims.editorId, claims.exp, now())
    }
  }
}

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
