/**
 * The AuthService of one instance: password mode, or an authoritative provider (a site's adapter, or
 * the trusted headers of an authenticating proxy) that fails closed; plus the permission policy.
 */
import type { IncomingMessage } from 'node:http'
import type { TLSSocket } from 'node:tls'
import type { Context } from 'koa'
import type { Logger } from 'pino'
import type { AuthAction, AuthAdapter, Config, Identity, TrustedHeaderAuth } from '../config.js'
import type { RuntimeSettings } from '../runtime.js'
import { PasswordNotConfiguredError, RateLimitedError, UnauthorizedError } from '../errors.js'
import type { SharedDocument } from '../remote/cms-refs-sync.js'
import { cleanEditorName, editorIdForName, toIdentity } from './identity.js'
import { LoginRateLimiter, rateLimitKey } from './password-auth.js'
import { RevokedSessions } from './revocations.js'
import {
  SESSION_COOKIE_NAME, SESSION_TTL_MS, boundEditorId, isBoundTo, sameSecret, sessionCookieHeader, signSession, verifySession,
  type SessionClaims
} from './session-cookie.js'

/** Decides which writes a signed-in editor may perform. */
interface Authorizer {
  /** True when a policy (adapter `authorize` or declarative `permissions`) is configured. */
  readonly active: boolean
  /** Whether the identity may perform the action (always true without a policy; a throw denies). */
  can: (identity: Identity, action: AuthAction, target?: { collection?: string, id?: string }) => Promise<boolean>
}

/** Authentication of one service instance. */
export interface AuthService {
  /** 'password' or 'provider' (an external identity provider is authoritative). */
  readonly mode: 'password' | 'provider'
  readonly authorizer: Authorizer
  /** The editor making a request, or null; a bad cookie is no identity, never a throw. */
  identify: (ctx: Context) => Promise<Identity | null>
  /** URL of the provider's login page for a return target (provider mode), else null. */
  loginUrl: (redirectTo: string) => string | null
  /**
   * Password login (null in provider mode): sets a fresh session cookie on success. Throws 503
   * without a configured password, 429 while the client is rate-limited, 401 for a wrong password.
   */
  login: ((ctx: Context, password: string, name?: string) => Promise<Identity>) | null
  /**
   * Clears the cookie and, in password mode, revokes its editorId; returns the provider's logout
   * URL (else null). Never throws for a missing or invalid cookie.
   */
  logout: (ctx: Context, redirectTo: string) => Promise<{ redirect: string | null }>
  /** The logouts the instances of a site share on `refs/cms/revocations` (password mode), else null; `onRevoke` hears each local one. */
  readonly sharedRevocations: (SharedDocument & { onRevoke: (listener: () => void) => void }) | null
  /** Flushes state (the revocations); resolves when done. */
  close: () => Promise<void>
}

/**
 * Builds authentication for one instance.
 * @param opts the config, the runtime settings, the log, `stateDir` (`.git/cms`, where revocations persist) and a clock (tests)
 * @returns the instance's AuthService
 */
export async function createAuth (opts: { config: Config, runtime: RuntimeSettings, stateDir: string, log: Logger, now?: () => number }): Promise<AuthService> {
  const { config, runtime, log } = opts
  const authConfig = config.auth
  const adapter = authConfig !== null && !isTrustedHeader(authConfig) ? authConfig : null
  const authorizer = createAuthorizer({ authorize: adapter?.authorize, permissions: config.permissions, log })
  const secure = (ctx: Context): boolean => isHttps(ctx.req, runtime.trustProxy)
  const clearCookie = (ctx: Context): void => { ctx.append('Set-Cookie', sessionCookieHeader(null, secure(ctx))) }

  if (authConfig !== null) {
    const provider = isTrustedHeader(authConfig) ? trustedHeaderProvider(authConfig, log) : adapterProvider(authConfig, log)
    return {
      mode: 'provider',
      authorizer,
      identify: async (ctx) => await provider.authenticate(ctx.req),
      loginUrl: (redirectTo) => provider.loginUrl(redirectTo),
      login: null,
      logout: async (ctx, redirectTo) => {
        clearCookie(ctx)
        return { redirect: provider.logoutUrl(redirectTo) }
      },
      sharedRevocations: null,
      close: async () => {}
    }
  }

  // Password mode: one shared password checked in constant time (check, compare and count run without an
  // await, so parallel guesses are counted exactly); a session is a signed cookie bound to the password.
  const { password, sessionSecret: secret } = runtime
  const now = opts.now ?? Date.now
  const revocations = await RevokedSessions.load(opts.stateDir, now())
  const limiter = new LoginRateLimiter()
  if (password === null) log.warn('no editor password is set (CMS_EDIT_PASSWORD); password sign-in is disabled')
  // Without a password no session is honoured; else signature, expiry, id grammar and revocation are checked.
  const session = (ctx: Context): SessionClaims | null => {
    const cookie = ctx.cookies.get(SESSION_COOKIE_NAME, { signed: false })
    if (password === null || cookie === undefined || cookie === '') return null
    const at = now()
    const claims = verifySession(secret, cookie, at)
    // A session made under another password (CMS_EDIT_PASSWORD changed) has ended.
    if (claims === null || !isBoundTo(secret, password, claims.sid ?? claims.editorId)) return null
    return revocations.has(claims.sid ?? claims.editorId, at) ? null : claims
  }
  return {
    mode: 'password',
    authorizer,
    identify: async (ctx) => {
      const claims = session(ctx)
      return claims === null ? null : editorIdentity(claims)
    },
    loginUrl: () => null,
    login: async (ctx, submitted, name = ''): Promise<Identity> => {
      if (password === null) throw new PasswordNotConfiguredError('Password sign-in is not configured: set CMS_EDIT_PASSWORD on the server')
      const client = rateLimitKey(clientAddress(ctx.req, runtime.trustProxy))
      const at = now()
      const retryAfter = limiter.retryAfter(client, at)
      if (retryAfter !== null) throw new RateLimitedError(retryAfter)
      if (!sameSecret(submitted, password)) {
        limiter.recordFailure(client, at)
        throw new UnauthorizedError('Wrong password')
      }
      limiter.reset(client)
      // The session's own id (the editorId, or a named sign-in's sid) carries the password's tag, so
      // a new CMS_EDIT_PASSWORD ends every older session (CONTRACT 17).
      const shown = cleanEditorName(name)
      const bound = boundEditorId(secret, password)
      const claims: SessionClaims = shown === ''
        ? { editorId: bound, exp: at + SESSION_TTL_MS }
        : { editorId: editorIdForName(shown), exp: at + SESSION_TTL_MS, name: shown, sid: bound }
      ctx.append('Set-Cookie', sessionCookieHeader(signSession(secret, claims), secure(ctx)))
      return editorIdentity(claims)
    },
    logout: async (ctx) => {
      const claims = session(ctx)
      if (claims !== null) await revocations.revoke(claims.sid ?? claims.editorId, claims.exp, now())
      clearCookie(ctx)
      return { redirect: null }
    },
    sharedRevocations: {
      name: 'revocations',
      text: () => revocations.sharedText(secret),
      merge: async (text) => await revocations.mergeShared(text, secret),
      empty: (text) => Object.keys((JSON.parse(text) as { revoked: object }).revoked).length === 0,
      onRevoke: (listener) => { revocations.listeners.add(listener) }
    },
    close: async () => { await revocations.flush() }
  }
}

/** The identity of a password-mode session. */
function editorIdentity (claims: SessionClaims): Identity {
  return { id: claims.editorId, name: claims.name ?? 'Editor', roles: ['editor'] }
}

function isTrustedHeader (auth: AuthAdapter | TrustedHeaderAuth): auth is TrustedHeaderAuth {
  return (auth as Partial<TrustedHeaderAuth>).provider === 'trusted-header'
}

/** Wraps a site's adapter so it fails closed: an error or an unsafe identity denies, a missing URL is null. */
export function adapterProvider (adapter: AuthAdapter, log: Logger) {
  const url = (kind: 'loginUrl' | 'logoutUrl', redirectTo: string): string | null => {
    try {
      const value: unknown = adapter[kind]({ redirectTo })
      if (typeof value === 'string' && value !== '') return value
      log.warn({ member: kind }, 'auth adapter returned no URL')
    } catch (err) {
      log.warn({ err, member: kind }, 'auth adapter URL function threw')
    }
    return null
  }
  return {
    authenticate: async (request: IncomingMessage): Promise<Identity | null> => {
      let result: unknown
      try {
        result = await adapter.authenticate(request)
      } catch (err) {
        log.warn({ err }, 'auth adapter authenticate threw; access denied')
        return null
      }
      if (result === null || result === undefined) return null
      const checked = toIdentity(result)
      if ('problem' in checked) {
        log.warn({ problem: checked.problem }, 'auth adapter returned an invalid identity; access denied')
        return null
      }
      return checked.identity
    },
    loginUrl: (redirectTo: string) => url('loginUrl', redirectTo),
    logoutUrl: (redirectTo: string) => url('logoutUrl', redirectTo)
  }
}

/**
 * Builds the trusted-header provider (only safe behind a proxy that strips client-supplied copies of
 * its headers); `{redirectTo}` in `loginUrl`/`logoutUrl` becomes the URL-encoded return target.
 */
export function trustedHeaderProvider (settings: TrustedHeaderAuth, log: Logger): ReturnType<typeof adapterProvider> {
  const idHeader = settings.idHeader.toLowerCase()
  const nameHeader = settings.nameHeader?.toLowerCase()
  const rolesHeader = settings.rolesHeader?.toLowerCase()
  return {
    authenticate: async (request: IncomingMessage): Promise<Identity | null> => {
      const id = single(request, idHeader)
      if (id === undefined) return null
      const name = nameHeader === undefined ? undefined : single(request, nameHeader)
      const rolesText = rolesHeader === undefined ? undefined : single(request, rolesHeader)
      const roles = (rolesText ?? '').split(',').map(r => r.trim()).filter(r => r !== '')
      const checked = toIdentity({ id: id.trim(), name: name?.trim(), roles })
      if ('problem' in checked) {
        log.warn({ problem: checked.problem, header: idHeader }, 'trusted identity header holds an unsafe id; access denied')
        return null
      }
      return checked.identity
    },
    loginUrl: (redirectTo) => fill(settings.loginUrl, redirectTo),
    logoutUrl: (redirectTo) => fill(settings.logoutUrl, redirectTo)
  }
}

/** A header's value when sent exactly once (Node joins most repeated headers with ', '). */
function single (request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name]
  if (typeof value !== 'string' || value === '') return undefined
  return value
}

function fill (template: string | undefined, redirectTo: string): string | null {
  if (template === undefined || template === '') return null
  return template.split('{redirectTo}').join(encodeURIComponent(redirectTo))
}

/**
 * Builds the permission policy: the adapter's `authorize`, the declarative `permissions` (the union
 * over the identity's roles), or both (both must allow); without either, every editor may do all.
 * @param opts the adapter's `authorize`, the declarative policy, and the log of a throwing policy
 * @returns the authorizer
 */
export function createAuthorizer (opts: { authorize?: AuthAdapter['authorize'], permissions?: Record<string, Array<AuthAction | '*'>> | null, log: Logger }): Authorizer {
  const { authorize, permissions, log } = opts
  const policy = permissions ?? null
  const active = authorize !== undefined || policy !== null
  return {
    active,
    can: async (identity, action, target = {}) => {
      if (!active) return true
      if (policy !== null && !grants(policy, identity.roles, action)) return false
      if (authorize === undefined) return true
      try {
        const args = { identity: { ...identity, roles: [...identity.roles] }, action, collection: target.collection, id: target.id }
        // Only a real `true` allows: a truthy string or object from a buggy policy denies.
        return (await authorize(args)) === true
      } catch (err) {
        log.warn({ err, action }, 'authorize threw; permission denied')
        return false
      }
    }
  }
}

/** Whether the declarative policy grants an action to any of the roles. */
export function grants (policy: Record<string, Array<AuthAction | '*'>>, roles: readonly string[], action: AuthAction): boolean {
  return roles.some(role => {
    // Own keys only: a role named `constructor` or `__proto__` must not reach Object.prototype.
    if (!Object.hasOwn(policy, role)) return false
    const actions = policy[role]
    return Array.isArray(actions) && (actions.includes('*') || actions.includes(action))
  })
}

/** The client's address: the socket's peer, or with a trusted proxy the last `X-Forwarded-For` hop (the nearest proxy's). */
function clientAddress (req: IncomingMessage, trustProxy: boolean): string {
  if (trustProxy) {
    const header = req.headers['x-forwarded-for']
    // Node joins repeated X-Forwarded-For headers with ', ', so the last hop is the last item.
    const hops = (Array.isArray(header) ? header.join(',') : header ?? '').split(',').map(h => h.trim()).filter(h => h !== '')
    const last = hops[hops.length - 1]
    if (last !== undefined) return last
  }
  return req.socket.remoteAddress ?? 'unknown'
}

/** HTTPS or not, by CMS_TRUST_PROXY rather than Koa's `ctx.secure` (a host app may set its own `proxy`). */
function isHttps (req: IncomingMessage, trustProxy: boolean): boolean {
  if ((req.socket as Partial<TLSSocket>).encrypted === true) return true
  if (!trustProxy) return false
  const header = req.headers['x-forwarded-proto']
  const value = (Array.isArray(header) ? header[0] : header) ?? ''
  return value.split(',')[0]?.trim().toLowerCase() === 'https'
}
