/**
 * Builds the Koa app of one instance: the error handler, then the API, admin and editor assets
 * and uploads. No business logic lives here.
 */
import Koa from 'koa'
import type { Services } from './services.js'
import { errorHandler } from './http/error-handler.js'
import { apiMiddleware } from './http/api-router.js'
import { writeRoutes, mutateRoute } from './http/write-routes.js'
import { publishRoutes } from './http/publish-routes.js'
import { uploadRoutes, serveUploads } from './http/upload-routes.js'
import { editorAssetsMiddleware } from './http/editor-assets.js'
import { adminMiddleware } from './http/admin-routes.js'
import { syncWebhookMiddleware } from './http/sync-webhook.js'

/**
 * Creates the Koa application.
 * @param services the instance
 * @returns the app
 */
export function createApp (services: Services): Koa {
  const app = new Koa({ proxy: services.runtime.trustProxy })
  // Koa's own console logging is off; what still reaches Koa (a stream failing after the
  // headers went out) is logged here with its stack.
  app.silent = true
  answerJsonWithoutFetch(app)
  app.on('error', (err: unknown) => { services.log.error({ err }, 'error outside the error handler') })
  app.use(errorHandler(services.log))
  app.use(async (ctx, next) => {
    // Credentialed cross-origin access is never granted.
    ctx.remove('Access-Control-Allow-Credentials')
    ctx.set('X-Content-Type-Options', 'nosniff')
    await next()
  })
  // The git host's push webhook: signed with git.syncSecret, no session (before the API's guards).
  app.use(syncWebhookMiddleware(services))
  app.use(apiMiddleware(services, [writeRoutes, uploadRoutes, publishRoutes], { 'POST /mutate': mutateRoute(services) }))
  app.use(adminMiddleware(services))
  app.use(editorAssetsMiddleware(services))
  app.use(serveUploads(services))
  return app
}

/**
 * Koa's `body` setter tests every object body against Blob and the global `Response`; the first
 * read of `Response` loads Node's whole fetch implementation (undici: 30-90 ms of CPU on this
 * machine, issue 18), on the first JSON answer after every start. A plain object or array (every
 * JSON answer of the API) is none of those, so it takes Koa's own JSON branch here directly; any
 * other value, or a body replacing a stream, goes through Koa's setter unchanged.
 */
function answerJsonWithoutFetch (app: Koa): void {
  const koaBody = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(app.response), 'body')
  if (koaBody?.get === undefined || koaBody.set === undefined) return
  const koaSet = koaBody.set
  Object.defineProperty(app.response, 'body', {
    configurable: true,
    enumerable: koaBody.enumerable,
    get: koaBody.get,
    set (this: Koa.Response & { _body: unknown, _explicitStatus?: boolean }, value: unknown) {
      if (!isJsonValue(value) || !isSettled(this._body)) { koaSet.call(this, value); return }
      // Koa 3's JSON branch: the body, status 200 unless one was set, no length, a JSON type.
      this._body = value
      if (this._explicitStatus !== true) this.status = 200
      this.remove('Content-Length')
      if (this.type === '' || !/\bjson\b/i.test(this.type)) this.type = 'json'
    }
  })
}

/** A plain object or array: what Koa would serialize as JSON. */
function isJsonValue (value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false
  if (Array.isArray(value)) return true
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** A previous body that needs no clean-up when replaced (Koa destroys a replaced stream). */
function isSettled (previous: unknown): boolean {
  return previous === null || previous === undefined || typeof previous === 'string' || Buffer.isBuffer(previous) || isJsonValue(previous)
}
