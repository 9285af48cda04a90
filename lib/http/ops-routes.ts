/**
 * The operator's routes, without a session (CONTRACT 18): `/healthz`, `/readyz`, `/metrics` with the
 * timing of every request by route pattern, and `POST <apiBasePath>/sync`, the git host's push
 * webhook (`X-Hub-Signature-256` or `X-Gitlab-Token` with `git.syncSecret`), which fetches at once.
 */
import { createHmac } from 'node:crypto'
import { access, constants } from 'node:fs/promises'
import path from 'node:path'
import Router from '@koa/router'
import type { Context, Middleware } from 'koa'
import type { Services } from '../services.js'
import type { CmsMetrics } from '../metrics/cms-metrics.js'
import { CmsError, ForbiddenError, NotFoundError, UnauthorizedError } from '../errors.js'
import { sameSecret } from '../auth/session-cookie.js'
import { readBody } from './request.js'

/** The operator's routes as one table: health, readiness, metrics (when enabled) and the sync webhook. */
export function opsRoutes (services: Services): Middleware {
  const { metrics } = services
  const token = services.config.metrics.token
  // Exact paths, as the other areas of the app match them (no trailing slash, no other case).
  const router = new Router({ strict: true, sensitive: true })
  router.all(['/healthz', '/readyz'], async (ctx) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw new CmsError(405, 'method_not_allowed', 'Method not allowed', {}, { Allow: 'GET, HEAD' })
    ctx.set('Cache-Control', 'no-store')
    const reason = ctx.path === '/healthz' ? null : await notReadyReason(services)
    ctx.status = reason === null ? 200 : 503
    ctx.body = reason === null ? { ok: true } : { ok: false, reason }
  })
  // A scrape must carry metrics.token as a bearer token unless it is null.
  if (metrics !== null) {
    router.get('/metrics', async (ctx) => {
      ctx.set('Cache-Control', 'no-store')
      if (token !== null) {
        const m = /^Bearer (.+)$/.exec(ctx.get('authorization'))
        if (m === null || !sameSecret(m[1]!, token)) throw new CmsError(401, 'unauthorized', 'A metrics scrape needs Authorization: Bearer <metrics.token>', {}, { 'WWW-Authenticate': 'Bearer realm="metrics"' })
      }
      ctx.type = metrics.registry.contentType
      ctx.body = await metrics.registry.metrics()
    })
  }
  router.post(`${services.config.apiBasePath}/sync`, async (ctx) => {
    ctx.set('Cache-Control', 'no-store')
    const secret = services.config.git.syncSecret
    if (!services.remote.enabled || secret === null) throw new NotFoundError('No such API route')
    const body = await readBody(ctx.req, MAX_BODY_BYTES)
    verifySignature(secret, body, ctx.get('x-hub-signature-256'), ctx.get('x-gitlab-token'))
    const sync = await services.remote.sync('webhook')
    ctx.body = { ok: true, sync }
  })
  return router.routes() as unknown as Middleware
}

/** Why the instance should not get requests yet (null: it is ready). */
async function notReadyReason (services: Services): Promise<string | null> {
  if (services.readiness.closing) return 'shutting down'
  try {
    await access(services.repoDir, constants.R_OK | constants.X_OK)
    await access(path.join(services.gitDir, 'HEAD'), constants.R_OK)
  } catch {
    return 'the repository is not readable'
  }
  if (!services.readiness.indexesBuilt) return 'the collection indexes are being built'
  return null
}

/** Times and counts every request (runs first, so it sees the status the error handler set). */
export function requestMetricsMiddleware (services: Services, metrics: CmsMetrics): Middleware {
  const { apiBasePath: api } = services.config
  const routeOf = routeLabeler(services)
  return async (ctx, next) => {
    const started = process.hrtime.bigint()
    try {
      await next()
    } finally {
      const route = routeOf(ctx)
      const status = ctx.status
      metrics.request(ctx.method, route, status, Number(process.hrtime.bigint() - started) / 1e9)
      if (ctx.method === 'POST' && status < 400) {
        if (route === `${api}/mutate` || route === `${api}/history`) metrics.saves.inc()
        else if (route === `${api}/publish`) metrics.publishes.inc()
      }
    }
  }
}

/** The label of a request's route: the router's pattern, or a fixed name for the area of the path. */
function routeLabeler (services: Services): (ctx: Context) => string {
  const { apiBasePath, mountPath, uploadsUrl } = services.config
  const under = (p: string, base: string): boolean => p === base || p.startsWith(base.endsWith('/') ? base : base + '/')
  return (ctx) => {
    const matched = (ctx as Context & { _matchedRoute?: unknown })._matchedRoute
    if (typeof matched === 'string') return matched
    const p = ctx.path
    if (p === '/healthz' || p === '/readyz' || p === '/metrics') return p
    if (under(p, apiBasePath)) return `${apiBasePath}/*`
    if (under(p, mountPath)) return `${mountPath}/*`
    if (under(p, '/__cms')) return '/__cms/*'
    if (under(p, uploadsUrl)) return `${uploadsUrl}/*`
    return 'other'
  }
}

/** A push event is small; anything larger is refused before it is read further. */
const MAX_BODY_BYTES = 1024 * 1024

/** Checks a webhook's signature or token against the secret. */
function verifySignature (secret: string, body: Buffer, hubSignature: string, gitlabToken: string): void {
  if (hubSignature === '' && gitlabToken === '') throw new UnauthorizedError('A signed request is required (X-Hub-Signature-256 or X-Gitlab-Token)')
  if (hubSignature !== '') {
    const expected = 'sha256=' + createHmac('sha256', secret).update(body).digest('hex')
    if (sameSecret(hubSignature.trim().toLowerCase(), expected)) return
  } else if (sameSecret(gitlabToken, secret)) {
    return
  }
  throw new ForbiddenError('The request signature does not match')
}
