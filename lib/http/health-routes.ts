/**
 * `GET /healthz` and `GET /readyz` (CONTRACT 18), outside `apiBasePath`, without a session: liveness
 * answers while the process serves; readiness once the repository is readable and every collection
 * index is built (not while closing), so a load balancer sends editors only where they get answers.
 */
import { access, constants } from 'node:fs/promises'
import path from 'node:path'
import type { Middleware } from 'koa'
import type { Services } from '../services.js'
import { CmsError } from '../errors.js'

/** The health and readiness routes. */
export function healthMiddleware (services: Services): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== '/healthz' && ctx.path !== '/readyz') { await next(); return }
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') throw new CmsError(405, 'method_not_allowed', 'Method not allowed', {}, { Allow: 'GET, HEAD' })
    ctx.set('Cache-Control', 'no-store')
    if (ctx.path === '/healthz') {
      ctx.body = { ok: true }
      return
    }
    const reason = await notReadyReason(services)
    ctx.status = reason === null ? 200 : 503
    ctx.body = reason === null ? { ok: true } : { ok: false, reason }
  }
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
