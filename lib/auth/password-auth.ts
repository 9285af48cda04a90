/**
 * Password mode: one shared editor password. A login checks the password in constant time under
 * the rate limit and issues a session with a fresh random editorId, or, when the editor gives a
 * name, the editorId derived from that name (so their drafts outlive the session); a session is a
 * signed cookie that logout revokes until it expires.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { CmsError, RateLimitedError, UnauthorizedError } from '../errors.js'
import type { Identity } from '../config.js'
import { signSession, verifySession, boundEditorId, isBoundTo, SESSION_TTL_MS, type SessionClaims } from './session-cookie.js'
import type { LoginRateLimiter } from './login-rate-limit.js'
import type { RevokedSessions } from './revocations.js'
import { cleanEditorName, editorIdForName } from './identity.js'

/** 503: password sign-in is not possible because no password is configured. */
export class PasswordNotConfiguredError extends CmsError {
  constructor () {
    super(503, 'password_not_configured', 'Password sign-in is not configured: set CMS_EDIT_PASSWORD on the server')
  }
}

/** What a successful login produces. */
export interface LoginResult {
  identity: Identity
  /** The signed cookie value. */
  cookie: string
  claims: SessionClaims
}

/** Settings of password mode. */
export interface PasswordAuthOptions {
  /** The shared password; null disables password sign-in (and honours no session). */
  password: string | null
  sessionSecret: string
  limiter: LoginRateLimiter
  revocations: RevokedSessions
  /** Clock (milliseconds), for tests. */
  now?: () => number
}

/** How many verified session cookies are remembered (the oldest is forgotten first). */
const VERIFIED_CACHE_SIZE = 1024

/** The identity of a password-mode session. */
function editorIdentity (claims: SessionClaims): Identity {
  return { id: claims.editorId, name: claims.name ?? 'Editor', roles: ['editor'] }
}

/** Password login, session verification and logout; one instance per service. */
export class PasswordAuth {
  private readonly password: string | null
  private readonly secret: string
  private readonly limiter: LoginRateLimiter
  private readonly revocations: RevokedSessions
  private readonly now: () => number
  /** A per-instance key: passwords are compared as HMACs, so lengths leak nothing either. */
  private readonly compareKey = randomBytes(32)
  /**
   * Cookie values whose signature and claims were verified, with their claims (oldest first, at
   * most VERIFIED_CACHE_SIZE): a request with one of them skips the HMAC. Keyed by the whole value;
   * expiry and revocation are still checked at every request.
   */
  private readonly verified = new Map<string, SessionClaims>()

  /**
   * @param opts password, secret, limiter and revocation store
   */
  constructor (opts: PasswordAuthOptions) {
    this.password = opts.password
    this.secret = opts.sessionSecret
    this.limiter = opts.limiter
    this.revocations = opts.revocations
    this.now = opts.now ?? Date.now
  }

  /** Whether a password is configured. */
  get enabled (): boolean {
    return this.password !== null
  }

  /**
   * Checks a password for a client. Throws 503 without a configured password, 429 while the
   * client is limited (whatever the password), 401 for a wrong one (counted as a failure).
   * Check, compare and count run without an await, so parallel guesses are counted exactly.
   * @param password the submitted password
   * @param clientKey the rate-limit key of the client
   * @param name the editor's name, optional: the same name gets the same editorId (its drafts)
   * @returns the new identity and its cookie
   */
  login (password: string, clientKey: string, name = ''): LoginResult {
    if (this.password === null) throw new PasswordNotConfiguredError()
    const now = this.now()
    const retryAfter = this.limiter.retryAfter(clientKey, now)
    if (retryAfter !== null) throw new RateLimitedError(retryAfter)
    if (!timingSafeEqual(this.digest(password), this.digest(this.password))) {
      this.limiter.recordFailure(clientKey, now)
      throw new UnauthorizedError('Wrong password')
    }
    this.limiter.reset(clientKey)
    // The session's own id (the editorId, or a named sign-in's sid) carries the password's tag, so
    // a new CMS_EDIT_PASSWORD ends every older session (CONTRACT 17).
    const shown = cleanEditorName(name)
    const bound = boundEditorId(this.secret, this.password)
    const claims: SessionClaims = shown === ''
      ? { editorId: bound, exp: now + SESSION_TTL_MS }
      : { editorId: editorIdForName(shown), exp: now + SESSION_TTL_MS, name: shown, sid: bound }
    return { identity: editorIdentity(claims), cookie: signSession(this.secret, claims), claims }
  }

  /**
   * The identity of a session cookie: signature, expiry, id grammar and revocation all checked.
   * @param cookie the cookie value (undefined when absent)
   * @returns the identity, or null
   */
  identify (cookie: string | undefined): Identity | null {
    const claims = this.verify(cookie)
    return claims === null ? null : editorIdentity(claims)
  }

  /**
   * Ends a session: its editorId is refused from now on (persisted). An invalid cookie is ignored.
   * @param cookie the cookie value (undefined when absent)
   * @returns resolves once the revocation is durable
   */
  async logout (cookie: string | undefined): Promise<void> {
    const claims = this.verify(cookie)
    if (claims !== null) await this.revocations.revoke(claims.sid ?? claims.editorId, claims.exp, this.now())
  }

  private verify (cookie: string | undefined): SessionClaims | null {
    if (this.password === null || cookie === undefined || cookie === '') return null
    const now = this.now()
    let claims = this.verified.get(cookie) ?? null
    if (claims !== null && !(claims.exp > now)) {
      this.verified.delete(cookie)
      return null
    }
    if (claims === null) {
      claims = verifySession(this.secret, cookie, now)
      // A session made under another password (CMS_EDIT_PASSWORD changed) has ended.
      if (claims === null || !isBoundTo(this.secret, this.password, claims.sid ?? claims.editorId)) return null
      if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value as string)
      this.verified.set(cookie, claims)
    }
    if (this.revocations.has(claims.sid ?? claims.editorId, now)) return null
    return claims
  }

  private digest (value: string): Buffer {
    return createHmac('sha256', this.compareKey).update(value, 'utf8').digest()
  }
}
