/**
 * STUB (to be replaced by the auth implementation): login, session and logout routes.
 */
import type Router from '@koa/router'
import type { Services } from '../services.js'

/**
 * Registers the public auth routes.
 * @param router the public API router (prefixed with apiBasePath)
 * @param services the instance
 */
export function authRoutes (router: Router, services: Services): void {
  router.get('/auth/session', async (ctx) => {
    const identity = await services.auth.identify(ctx)
    ctx.body = { authenticated: identity !== null, identity }
  })
}
