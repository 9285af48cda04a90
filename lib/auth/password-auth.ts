/**
 * Password mode: one shared editor password checked in constant time under the rate limit; a
 * session is a signed cookie (editorId random, or derived from the name given) that logout revokes.
 */
import { PasswordNotConfiguredError, RateLimitedError, UnauthorizedError } from '../errors.js'
import type { Identity } from '../config.js'
import { signSession, verifySession, boundEditorId, isBoundTo, sameSecret, SESSION_TTL_MS, type SessionClaims } from './session-cookie.js'
import { LoginRateLimiter } from './login-rate-limit.js'
import type { RevokedSessions } from './revocations.js'
import { cleanEditorName, editorIdForName } from './identity.js'

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

/** Password login, session verification and logout; one per service. */
export interface PasswordAuth {
  /** Whether a password is configured. */
  enabled: boolean
  /**
   * Checks a password for a client. Throws 503 without a configured password, 429 while the
   * client is limited (whatever the password), 401 for a wrong one (counted as a failure).
   * Check, compare and count run without an await, so parallel guesses are counted exactly.
   */
  login: (password: string, clientKey: string, name?: string) => LoginResult
  /** The identity of a session cookie (signature, expiry, id grammar and revocation checked), or null. */
  identify: (cookie: string | undefined) => Identity | null
  /** Ends a session: its id is refused from now on (persisted); an invalid cookie is ignored. */
  logout: (cookie: string | undefined) => Promise<void>
}

/** Builds password mode for one service. */
export function passwordAuth (opts: PasswordAuthOptions): PasswordAuth {
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
    login: (submitted, clientKey, name = '') => {
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
    identify: (cookie) => {
      const claims = verify(cookie)
      return claims === null ? null : editorIdentity(claims)
    },
    logout: async (cookie) => {
      const claims = verify(cookie)
      if (claims !== null) await revocations.revoke(claims.sid ?? claims.editorId, claims.exp, now())
    }
  }
}
