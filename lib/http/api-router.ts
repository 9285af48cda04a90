/**
 * The editor API under `apiBasePath`: the public auth routes first, then every other route behind
 * authentication (401), with the request-forgery header (403) on mutating methods.
 */
import Router from '@koa/router'
import compose from 'koa-compose'
import type { Middleware } from 'koa'
import type { Services } from '../services.js'
import { MissingCsrfHeaderError, NotFoundError, UnauthorizedError } from '../errors.js'
import { authRoutes } from './auth-routes.js'
import { contentRoutes } from './content-routes.js'
import { mediaRoutes } from './media-routes.js'
import { editorRoutes } from './editor-routes.js'
import { uploadRoutes } from './upload-routes.js'

/** Builds the API middleware. */
export function apiMiddleware (services: Services): Middleware {
  const base = services.config.apiBasePath
  const isApi = (path: string): boolean => path === base || path.startsWith(base + '/')

  const publicRouter = new Router({ prefix: base })
  authRoutes(publicRouter, services)

  const editorRouter = new Router({ prefix: base })
  contentRoutes(editorRouter, services)
  mediaRoutes(editorRouter, services)
  editorRoutes(editorRouter, services)
  uploadRoutes(editorRouter, services)

  const guarded = compose<Parameters<Middleware>[0]>([
    async (ctx, next) => {
      const identity = await services.auth.identify(ctx)
      if (identity === null) throw new UnauthorizedError('Authentication required')
      if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && ctx.get('x-cms-request') !== '1') throw new MissingCsrfHeaderError()
      ctx.state.identity = identity
      await next()
    },
    editorRouter.routes() as unknown as Middleware,
    editorRouter.allowedMethods() as unknown as Middleware,
    () => { throw new NotFoundError('No such API route') }
  ])
  const publicRoutes = publicRouter.routes() as unknown as Middleware
  return async (ctx, next) => {
    if (!isApi(ctx.path)) { await next(); return }
    ctx.set('Cache-Control', 'no-store')
    await publicRoutes(ctx, async () => { await guarded(ctx, async () => {}) })
  }
}
