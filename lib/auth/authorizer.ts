/**
 * The permission policy: an adapter's `authorize` function, the declarative
 * `permissions: { role: [actions] | ['*'] }` (the union over the identity's roles), or both (then
 * both must allow). Without either, every signed-in editor may do everything.
 */
import type { Logger } from 'pino'
import type { AuthAction, AuthAdapter, Identity } from '../config.js'
import type { Authorizer, AuthTarget } from './types.js'

/** Settings of an authorizer. */
export interface AuthorizerOptions {
  /** The adapter's `authorize`, when it has one. */
  authorize?: AuthAdapter['authorize']
  /** The declarative policy, when configured. */
  permissions?: Record<string, Array<AuthAction | '*'>> | null
  log: Logger
}

/** Builds the authorizer of an instance. */
export function createAuthorizer (opts: AuthorizerOptions): Authorizer {
  const { authorize, permissions, log } = opts
  const policy = permissions ?? null
  const active = authorize !== undefined || policy !== null
  return {
    active,
    can: async (identity: Identity, action: AuthAction, target: AuthTarget = {}): Promise<boolean> => {
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
