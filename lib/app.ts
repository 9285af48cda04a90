/** Builds the Koa app of one instance: the error handler, then the API, admin and editor assets and uploads. */
import Koa from 'koa'
import compress from 'koa-compress'
import { constants as zlib } from 'node:zlib'
import type { Services } from './services.js'
import { errorHandler } from './http/error-handler.js'
import { apiMiddleware } from './http/api-router.js'
import { serveUploads } from './http/upload-routes.js'
import { adminMiddleware, editorAssetsMiddleware } from './http/admin-routes.js'
import { opsRoutes, requestMetricsMiddleware } from './http/ops-routes.js'

/** Creates the Koa application. */
export function createApp (services: Services): Koa {
  const app = new Koa({ proxy: services.runtime.trustProxy })
  // What still reaches Koa (a stream failing after the headers went out) is logged here, not on the console.
  app.silent = true
  app.on('error', (err: unknown) => { services.log.error({ err }, 'error outside the error handler') })
  const { metrics } = services
  // Outermost: it sees the status the error handler set, and the route the router matched.
  if (metrics !== null) app.use(requestMetricsMiddleware(services, metrics))
  app.use(errorHandler(services.log))
  // Responses over 1 KB, brotli quality 4 (11 took 13 s on the 618 KB CodeMirror chunk) or gzip.
  app.use(compress({
    threshold: 1024,
    br: { params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } },
    gzip: { level: 6 },
    deflate: false,
    zstd: false
  } as compress.CompressOptions))
  app.use(async (ctx, next) => {
    // Credentialed cross-origin access is never granted.
    ctx.remove('Access-Control-Allow-Credentials')
    ctx.set('X-Content-Type-Options', 'nosniff')
    await next()
  })
  // Liveness, readiness, metrics and the git host's push webhook: no session (before the API's guards), no content.
  app.use(opsRoutes(services))
  app.use(apiMiddleware(services))
  app.use(adminMiddleware(services))
  app.use(editorAssetsMiddleware(services))
  app.use(serveUploads(services))
  return app
}
