/**
 * The editor API under `apiBasePath`: the public auth routes first, then every other route behind
 * authentication (401), with the request-forgery header (403) on mutating methods. A few hot routes
 * (`POST /mutate`) are also served directly, behind the same two guards.
 */
import Router from '@koa/router'
import compose from 'koa-compose'
import type { Middleware } from 'koa'
import type { Services } from '../services.js'
import { NotFoundError } from '../errors.js'
import { requireEditor, requireCsrfHeader } from './guards.js'
import { authRoutes } from './auth-routes.js'
import { contentRoutes } from './content-routes.js'
import { mediaRoutes } from './media-routes.js'

/**
 * Builds the API middleware.
 * @param services the instance
 * @param extraRoutes registrars for further authenticated routes (writes, drafts, publish, ...)
 * @param directRoutes `'POST /path'` (under `apiBasePath`) -> the route's middleware, served before
 *   the routers are matched (the same route registered on a router serves its other spellings)
 * @returns one middleware that handles every request under `apiBasePath` and passes on the rest
 */
export function apiMiddleware (
  services: Services,
  extraRoutes: Array<(router: Router, services: Services) => void> = [],
  directRoutes: Record<string, Middleware> = {}
): Middleware {
  const base = services.config.apiBasePath
  const isApi = (path: string): boolean => path === base || path.startsWith(base + '/')

  const publicRouter = new Router({ prefix: base })
  authRoutes(publicRouter, services)

  const editorRouter = new Router({ prefix: base })
  contentRoutes(editorRouter, services)
  mediaRoutes(editorRouter, services)
  for (const register of extraRoutes) register(editorRouter, services)

  const editor = requireEditor(services)
  const csrf = requireCsrfHeader()
  const guarded = compose<Parameters<Middleware>[0]>([
    editor,
    async (ctx, next) => {
      if (ctx.method === 'GET' || ctx.method === 'HEAD') await next()
      else await csrf(ctx, next)
    },
    editorRouter.routes() as unknown as Middleware,
    editorRouter.allowedMethods() as unknown as Middleware,
    () => { throw new NotFoundError('No such API route') }
  ])
  const publicRoutes = publicRouter.routes() as unknown as Middleware
  // The hot routes (a save) behind the same guards, without matching every route of both routers
  // (and building their middleware chain) at each request (issue 18).
  const direct = new Map<string, Middleware>()
  for (const [route, handler] of Object.entries(directRoutes)) {
    const [method, path] = route.split(' ') as [string, string]
    direct.set(`${method} ${base}${path}`, compose<Parameters<Middleware>[0]>([editor, csrf, handler]))
  }

  return async (ctx, next) => {
    if (!isApi(ctx.path)) { await next(); return }
    ctx.set('Cache-Control', 'no-store')
    const route = direct.get(`${ctx.method} ${ctx.path}`)
    if (route !== undefined) { await route(ctx, async () => {}); return }
    await publicRoutes(ctx, async () => { await guarded(ctx, async () => {}) })
  }
}
