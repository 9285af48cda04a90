/**
 * Password mode: one shared editor password checked in constant time under the rate limit; a
 * session is a signed cookie (editorId random, or derived from the name given) that logout revokes.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { CmsError, RateLimitedError, UnauthorizedError } from '../errors.js'
import type { Identity } from '../config.js'
import { signSession, verifySession, boundEditorId, isBoundTo, SESSION_TTL_MS, type SessionClaims } from './session-cookie.js'
import { LoginRateLimiter } from './login-rate-limit.js'
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
}

/** Settings of password mode. */
export interface PasswordAuthOptions {
  /** The shared password; null disables password sign-in (and honours no session). */
  password: string | null
  sessionSecret: string
  revocations: RevokedSessions
  /** Clock (milliseconds), for tests. */
  now?: () => number
}

/** The identity of a password-mode session. */
function editorIdentity (claims: SessionClaims): Identity {
  return { id: claims.editorId, name: claims.name ?? 'Editor', roles: ['editor'] }
}

/** Password login, session verification and logout; one instance per service. */
export class PasswordAuth {
  private readonly password: string | null
  private readonly secret: string
  private readonly limiter = new LoginRateLimiter()
  private readonly revocations: RevokedSessions
  private readonly now: () => number
  /** A per-instance key: passwords are compared as HMACs, so lengths leak nothing either. */
  private readonly compareKey = randomBytes(32)

  /**
   * @param opts password, secret and revocation store
   */
  constructor (opts: PasswordAuthOptions) {
    this.password = opts.password
    this.secret = opts.sessionSecret
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
    return { identity: editorIdentity(claims), cookie: signSession(this.secret, claims) }
  }

  /**
   * The identity of a session cookie: signature, expiry, id grammar and revocation all checked.
   * @returns the identity, or null
   */
  identify (cookie: string | undefined): Identity | null {
    const claims = this.verify(cookie)
    return claims === null ? null : editorIdentity(claims)
  }

  /** Ends a session: its editorId is refused from now on (persisted); an invalid cookie is ignored. */
  async logout (cookie: string | undefined): Promise<void> {
    const claims = this.verify(cookie)
    if (claims !== null) await this.revocations.revoke(claims.sid ?? claims.editorId, claims.exp, this.now())
  }

  private verify (cookie: string | undefined): SessionClaims | null {
    if (this.password === null || cookie === undefined || cookie === '') return null
    const now = this.now()
    const claims = verifySession(this.secret, cookie, now)
    // A session made under another password (CMS_EDIT_PASSWORD changed) has ended.
    if (claims === null || !isBoundTo(this.secret, this.password, claims.sid ?? claims.editorId)) return null
    if (this.revocations.has(claims.sid ?? claims.editorId, now)) return null
    return claims
  }

  private digest (value: string): Buffer {
    return createHmac('sha256', this.compareKey).update(value, 'utf8').digest()
  }
}
