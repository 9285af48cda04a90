/**
 * `POST <apiBasePath>/sync`: the git host's push webhook, verified with `git.syncSecret` as GitHub,
 * Gitea and Forgejo sign it (`X-Hub-Signature-256`) or GitLab sends it (`X-Gitlab-Token`). Without a
 * secret the route is 404; no signature is 401, a wrong one 403, neither changes anything. A verified
 * call fetches and fast-forwards at once.
 */
import { createHmac } from 'node:crypto'
import type { Middleware } from 'koa'
import type { Services } from '../services.js'
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../errors.js'
import { sameSecret } from '../auth/session-cookie.js'
import { readBody } from './request.js'

/** A push event is small; anything larger is refused before it is read further. */
const MAX_BODY_BYTES = 1024 * 1024

/** Builds the middleware answering the sync webhook (every other request passes on). */
export function syncWebhookMiddleware (services: Services): Middleware {
  const route = `${services.config.apiBasePath}/sync`
  return async (ctx, next) => {
    if (ctx.path !== route || ctx.method !== 'POST') { await next(); return }
    ctx.set('Cache-Control', 'no-store')
    const secret = services.config.git.syncSecret
    if (!services.remote.enabled || secret === null) throw new NotFoundError('No such API route')
    const body = await readBody(ctx.req, MAX_BODY_BYTES)
    verifySignature(secret, body, ctx.get('x-hub-signature-256'), ctx.get('x-gitlab-token'))
    const sync = await services.remote.sync('webhook')
    ctx.body = { ok: true, sync }
  }
}

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
