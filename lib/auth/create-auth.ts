/**
 * Builds the AuthService of one instance: password mode (signed session cookie, rate-limited
 * login, persistent logout revocations) or provider mode (a site adapter or the trusted-header
 * provider, authoritative: no password fallback), plus the permission policy.
 */
import type { Context } from 'koa'
import type { Logger } from 'pino'
import type { AuthAdapter, Config, Identity, TrustedHeaderAuth } from '../config.js'
import type { RuntimeSettings } from '../runtime.js'
import { ConflictError } from '../errors.js'
import type { AuthService, IdentityProvider } from './types.js'
import { createAuthorizer } from './authorizer.js'
import { adapterProvider, trustedHeaderProvider } from './identity-providers.js'
import { PasswordAuth } from './password-auth.js'
import { RevokedSessions } from './revocations.js'
import { SESSION_COOKIE_NAME, sessionCookieHeader } from './session-cookie.js'
import { clientAddress, isHttps, rateLimitKey } from './client-address.js'

/** What createAuth needs from the instance. */
export interface CreateAuthOptions {
  config: Config
  runtime: RuntimeSettings
  /** `.git/cms`, where revocations persist. */
  stateDir: string
  log: Logger
  /** Clock in milliseconds (tests). */
  now?: () => number
}

/** Builds authentication for one instance. */
export async function createAuth (opts: CreateAuthOptions): Promise<AuthService> {
  const { config, runtime, log } = opts
  const authConfig = config.auth
  const adapter = authConfig !== null && !isTrustedHeader(authConfig) ? authConfig : null
  const authorizer = createAuthorizer({ authorize: adapter?.authorize, permissions: config.permissions, log })
  const secure = (ctx: Context): boolean => isHttps(ctx.req, runtime.trustProxy)
  const clearCookie = (ctx: Context): void => { ctx.append('Set-Cookie', sessionCookieHeader(null, secure(ctx))) }

  if (authConfig !== null) {
    const provider: IdentityProvider = isTrustedHeader(authConfig)
      ? trustedHeaderProvider(authConfig, log)
      : adapterProvider(authConfig, log)
    return {
      mode: 'provider',
      authorizer,
      identify: async (ctx) => await provider.authenticate(ctx.req),
      loginUrl: (redirectTo) => provider.loginUrl(redirectTo),
      login: async () => { throw new ConflictError('An external identity provider is authoritative; password sign-in is disabled') },
      logout: async (ctx, redirectTo) => {
        clearCookie(ctx)
        return { redirect: provider.logoutUrl(redirectTo) }
      },
      sharedRevocations: null,
      close: async () => {}
    }
  }

  const revocations = await RevokedSessions.load(opts.stateDir, (opts.now ?? Date.now)())
  const password = new PasswordAuth({
    password: runtime.password,
    sessionSecret: runtime.sessionSecret,
    revocations,
    now: opts.now
  })
  if (!password.enabled) log.warn('no editor password is set (CMS_EDIT_PASSWORD); password sign-in is disabled')
  const cookieOf = (ctx: Context): string | undefined => ctx.cookies.get(SESSION_COOKIE_NAME, { signed: false })
  return {
    mode: 'password',
    authorizer,
    identify: async (ctx) => password.identify(cookieOf(ctx)),
    loginUrl: () => null,
    login: async (ctx, submitted, name): Promise<Identity> => {
      const result = password.login(submitted, rateLimitKey(clientAddress(ctx.req, runtime.trustProxy)), name)
      ctx.append('Set-Cookie', sessionCookieHeader(result.cookie, secure(ctx)))
      return result.identity
    },
    logout: async (ctx) => {
      await password.logout(cookieOf(ctx))
      clearCookie(ctx)
      return { redirect: null }
    },
    sharedRevocations: {
      text: () => revocations.sharedText(runtime.sessionSecret),
      merge: async (text) => await revocations.mergeShared(text, runtime.sessionSecret),
      onRevoke: (listener) => { revocations.listeners.add(listener) }
    },
    close: async () => { await revocations.flush() }
  }
}

function isTrustedHeader (auth: AuthAdapter | TrustedHeaderAuth): auth is TrustedHeaderAuth {
  return (auth as Partial<TrustedHeaderAuth>).provider === 'trusted-header'
}
