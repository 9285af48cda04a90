/**
 * `POST <apiBasePath>/mutate` with a small JSON body, served from Node's request event without
 * Koa (issue 18): a save is the one request the service must answer a thousand times a second, and
 * Koa's context, its response step, on-finished and the middleware chain cost ~8 KB of allocations
 * and 10-20 µs of CPU per request. The same checks run in the same order as on the Koa route
 * (api-router.ts, write-routes.ts, guards.ts): the editor's identity (401), the request-forgery
 * header (403), the body (`small-json-body.ts`: 400), the command's validation (400), the command.
 * An error becomes the answer the error handler gives (`errorAnswer`), with the headers the app
 * sets on every API answer (`X-Content-Type-Options`, `Cache-Control`).
 *
 * Only the plain request is taken: exactly that path (no query string, no other spelling), and a
 * body `smallJsonLength` accepts (declared length up to 64 KiB, `application/json`, no content or
 * transfer encoding). Everything else, before anything of it is read, goes to the Koa app as it is:
 * a bigger or another kind of body (koa-body's 413 / 415), another method or spelling of the route.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type Koa from 'koa'
import type { Context } from 'koa'
import type { Services } from '../services.js'
import { BadRequestError, MissingCsrfHeaderError, UnauthorizedError } from '../errors.js'
import { createCommandValidators } from '../commands/command-schemas.js'
import { mutate } from '../commands/mutate.js'
import { readSmallJson, smallJsonLength } from './small-json-body.js'
import { errorAnswer } from './error-handler.js'

/** The app's request listener (Koa's `callback()`: HTTP/1 and HTTP/2 compatibility requests). */
export type RequestListener = ReturnType<Koa['callback']>

/**
 * Wraps the app's request listener with the direct save route.
 * @param services the instance
 * @param app the Koa app's listener (`app.callback()`), which serves every other request
 * @returns the listener to give `http.createServer`
 */
export function withDirectSave (services: Services, app: RequestListener): RequestListener {
  const route = `${services.config.apiBasePath}/mutate`
  const validators = createCommandValidators()
  const log = services.log

  const serve = async (req: IncomingMessage, res: ServerResponse, length: number): Promise<void> => {
    let status = 200
    let answer: unknown
    try {
      // The identity providers read the request only (create-auth.ts).
      const identity = await services.auth.identify({ req } as unknown as Context)
      if (identity === null) throw new UnauthorizedError()
      if (req.headers['x-cms-request'] !== '1') throw new MissingCsrfHeaderError()
      const body = await readSmallJson(req, length)
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new BadRequestError('JSON body must be an object')
      answer = await mutate({ services, identity }, validators.mutate(body))
    } catch (err) {
      const failed = errorAnswer(err, log, 'POST', route)
      status = failed.status
      for (const [name, value] of Object.entries(failed.headers)) res.setHeader(name, value)
      answer = failed.body
    }
    send(res, status, answer, log, route)
  }

  return async (req, res) => {
    if (req.method !== 'POST' || req.url !== route || req.httpVersionMajor !== 1) { await app(req, res); return }
    const length = smallJsonLength(req as IncomingMessage)
    if (length <= 0) { await app(req, res); return }
    // What the app sets on every answer (app.ts) and on every API answer (api-router.ts).
    res.setHeader('X-Content-Type-Options', 'nosniff')
    res.setHeader('Cache-Control', 'no-store')
    await serve(req as IncomingMessage, res as ServerResponse, length).catch((err: unknown) => {
      log.error({ err }, 'error outside the error handler')
      if (!res.headersSent) { res.statusCode = 500; res.end() } else (res as ServerResponse).destroy()
    })
  }
}

/** Writes a JSON answer as Koa does (`application/json; charset=utf-8`, its length), unless the client is gone. */
function send (res: ServerResponse, status: number, value: unknown, log: Services['log'], route: string): void {
  let text: string
  try {
    text = JSON.stringify(value)
  } catch (err) {
    status = 500
    text = JSON.stringify(errorAnswer(err, log, 'POST', route).body)
  }
  if (res.writableEnded || res.destroyed) return
  res.statusCode = status
  res.setHeader('Content-Type', 'application/json; charset=utf-8')
  res.setHeader('Content-Length', Buffer.byteLength(text))
  res.end(text)
}
