/**
 * The one place where an error becomes a response `{ error, code, ...details }`; anything unknown is a
 * logged 500 that leaks nothing. JSON is serialized here, so a body that cannot be is a JSON 500 too.
 */
import { STATUS_CODES } from 'node:http'
import type { Middleware } from 'koa'
import type { Logger } from 'pino'
import { CmsError } from '../errors.js'

interface HttpLikeError {
  status?: unknown
  statusCode?: unknown
  httpCode?: unknown
  expose?: unknown
  message?: unknown
}

/** Builds the error-handling middleware (it must run first); unexpected errors go to `log`. */
export function errorHandler (log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next()
      serializeJsonBody(ctx)
    } catch (err) {
      const e = (err ?? {}) as HttpLikeError
      const status = [e.status, e.statusCode, e.httpCode].find((s): s is number => typeof s === 'number') ?? 500
      if (err instanceof CmsError) {
        ctx.status = err.status
        ctx.set(err.headers)
        ctx.body = { error: err.message, code: err.code, ...err.details }
      } else if (status >= 400 && status < 500) {
        ctx.status = status
        const message = e.expose === true && typeof e.message === 'string' ? e.message : 'Bad request'
        // A 4xx Koa or its middleware threw: the status's name in snake case, as our classes name theirs.
        ctx.body = { error: message, code: (STATUS_CODES[status] ?? 'Bad Request').toLowerCase().replace(/ /g, '_') }
      } else {
        log.error({ err, method: ctx.method, path: ctx.path }, 'unexpected error')
        ctx.status = 500
        ctx.body = { error: 'Internal server error', code: 'internal' }
      }
      serializeJsonBody(ctx)
    }
  }
}

/** Turns an object or array body into its JSON text now, so that a failure is caught above. */
function serializeJsonBody (ctx: Parameters<Middleware>[0]): void {
  const body: unknown = ctx.body
  if (body === null || typeof body !== 'object') return
  const proto: unknown = Object.getPrototypeOf(body)
  if (!Array.isArray(body) && proto !== Object.prototype && proto !== null) return
  const status = ctx.status
  const text = JSON.stringify(body)
  ctx.body = text
  // Setting a string body sets the status to 200 and keeps the JSON type Koa set for the object.
  ctx.status = status
  ctx.type = 'application/json'
}
