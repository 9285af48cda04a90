/**
 * The external identity providers, authoritative in provider mode: a site's adapter from
 * `cms.config.mjs`, or the built-in trusted-header provider for a reverse proxy that authenticates
 * users (oauth2-proxy, Authelia, Cloudflare Access). Both fail closed: a throw, a rejection, an unsafe
 * id or a wrong shape denies access and is logged.
 */
import type { IncomingMessage } from 'node:http'
import type { Logger } from 'pino'
import type { AuthAdapter, Identity, TrustedHeaderAuth } from '../config.js'
import type { IdentityProvider } from './types.js'
import { toIdentity } from './identity.js'

/** Wraps a site's adapter so it fails closed. */
export function adapterProvider (adapter: AuthAdapter, log: Logger): IdentityProvider {
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
    loginUrl: (redirectTo) => url('loginUrl', redirectTo),
    logoutUrl: (redirectTo) => url('logoutUrl', redirectTo)
  }
}

/**
 * Builds the trusted-header provider (only safe behind a proxy that strips client-supplied copies of
 * its headers and writes its own). `loginUrl`/`logoutUrl` may contain `{redirectTo}`, which is
 * replaced by the URL-encoded return target; otherwise they are used as they are.
 */
export function trustedHeaderProvider (settings: TrustedHeaderAuth, log: Logger): IdentityProvider {
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
