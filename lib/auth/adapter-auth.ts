/**
 * An identity provider adapter from `cms.config.mjs`: `authenticate(request)` is called on every
 * request; anything other than a well-formed identity with a safe id (a throw, a rejection, an
 * unsafe id, a wrong shape) denies access and is logged.
 */
import type { IncomingMessage } from 'node:http'
import type { Logger } from 'pino'
import type { AuthAdapter, Identity } from '../config.js'
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
