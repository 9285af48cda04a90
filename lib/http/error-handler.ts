/**
 * The one place where an error becomes a response: typed errors map to their status and a JSON
 * body `{ error, ...details }`; body-parser errors keep their 4xx status; anything else is a 500
 * whose body leaks nothing (the stack goes to the log).
 */
import type { Middleware } from 'koa'
import type { Logger } from 'pino'
import { CmsError } from '../errors.js'

interface HttpLikeError {
  status?: unknown
  statusCode?: unknown
  httpCode?: unknown
  expose?: unknown
  type?: unknown
  message?: unknown
}

/**
 * Builds the error-handling middleware.
 * @param log where unexpected errors are logged
 * @returns Koa middleware that must run first
 */
export function errorHandler (log: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next()
    } catch (err) {
      if (err instanceof CmsError) {
        ctx.status = err.status
        ctx.set(err.headers)
        ctx.body = { error: err.message, ...err.details }
        return
      }
      const e = (err ?? {}) as HttpLikeError
      const status = [e.status, e.statusCode, e.httpCode].find((s): s is number => typeof s === 'number') ?? 500
      if (status >= 400 && status < 500) {
        ctx.status = status
        ctx.body = { error: clientMessage(status, e) }
        return
      }
      log.error({ err, method: ctx.method, path: ctx.path }, 'unexpected error')
      ctx.status = 500
      ctx.body = { error: 'Internal server error' }
    }
  }
}

function clientMessage (status: number, e: HttpLikeError): string {
  if (status === 413) return 'Request body too large'
  if (status === 415) return 'Unsupported media type'
  if (status === 400 && (e.type === 'entity.parse.failed' || String(e.message).includes('JSON'))) return 'Malformed JSON body'
  return e.expose === true && typeof e.message === 'string' ? e.message : 'Bad request'
}
