/**
 * The built-in provider for a reverse proxy that authenticates users and passes who they are in
 * headers (oauth2-proxy, Authelia, Cloudflare Access). Only safe behind a proxy that strips
 * client-supplied copies of these headers and writes its own.
 */
import type { IncomingMessage } from 'node:http'
import type { Logger } from 'pino'
import type { Identity, TrustedHeaderAuth } from '../config.js'
import type { IdentityProvider } from './types.js'
import { toIdentity } from './identity.js'

/**
 * Builds the trusted-header provider. `loginUrl`/`logoutUrl` may contain `{redirectTo}`, which
 * is replaced by the URL-encoded return target; otherwise they are used as they are.
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
