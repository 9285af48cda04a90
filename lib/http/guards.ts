/**
 * Request guards shared by the API routes, in the contract's order: authentication (401), the
 * request-forgery header (403), then the body (415/413/400). Permission checks (403) happen in
 * commands, after the payload is validated.
 */
import type { Middleware, Context } from 'koa'
import { UnauthorizedError, MissingCsrfHeaderError, UnsupportedMediaTypeError, BadRequestError } from '../errors.js'
import type { Services } from '../services.js'
import type { Identity } from '../config.js'
import { readSmallJson, smallJsonLength } from './small-json-body.js'

/** Koa state set by `requireEditor`. */
export interface EditorState {
  identity: Identity
}

/** Maximum JSON body size. */
export const JSON_LIMIT_BYTES = 1024 * 1024

/**
 * Rejects requests without a valid editor identity (401) and stores the identity in `ctx.state`.
 * @param services the instance
 * @returns middleware
 */
export function requireEditor (services: Services): Middleware {
  return async (ctx, next) => {
    const identity = await services.auth.identify(ctx)
    if (identity === null) throw new UnauthorizedError()
    ctx.state.identity = identity
    await next()
  }
}

/**
 * Rejects mutating requests without `x-cms-request: 1` (403 with the spec's body).
 * @returns middleware
 */
export function requireCsrfHeader (): Middleware {
  return async (ctx, next) => {
    if (ctx.get('x-cms-request') !== '1') throw new MissingCsrfHeaderError()
    await next()
  }
}

/** koa-body's module, once asked for (by `preloadJsonParser` or the first JSON body). */
let koaBodyModule: Promise<typeof import('koa-body')> | null = null

/**
 * Starts loading koa-body (with zod, which checks its options: ~9 MB of heap and 0.1-0.3 s of CPU on
 * this machine) without waiting for it: `createApp` calls it so that the load runs while the start
 * waits for the file watcher's set-up, instead of on the first login (issue 18).
 */
export function preloadJsonParser (): void {
  (koaBodyModule ??= import('koa-body')).catch(() => { koaBodyModule = null })
}

/** koa-body loads on the first JSON body (or while the service starts), not with this module. */
async function loadJsonParser (): Promise<Middleware> {
  const { koaBody } = await (koaBodyModule ??= import('koa-body'))
  return koaBody({
    json: true,
    multipart: false,
    urlencoded: false,
    text: false,
    jsonStrict: true,
    jsonLimit: JSON_LIMIT_BYTES,
    includeUnparsed: false
  })
}

/**
 * Parses a JSON body (415 for another type, 413 over 1 MiB, 400 when malformed or not an object).
 * An empty body reads as `{}`.
 * @param opts `optional`: an absent body is allowed
 * @returns middleware
 */
export function jsonBody (opts: { optional?: boolean } = {}): Middleware {
  let parser: Promise<Middleware> | null = null
  return async (ctx, next) => {
    const length = ctx.get('content-length')
    const hasBody = (length !== '' && length !== '0') || ctx.get('transfer-encoding') !== ''
    if (!hasBody) {
      if (opts.optional !== true) throw new BadRequestError('A JSON body is required')
      ctx.request.body = {}
      await next()
      return
    }
    // The plain case (a save's small body) is read directly; anything else goes through koa-body.
    const small = smallJsonLength(ctx.req)
    if (small > 0) {
      ctx.request.body = await readSmallJson(ctx.req, small) as typeof ctx.request.body
    } else {
      if (ctx.is('application/json') === false) throw new UnsupportedMediaTypeError('Request body must be application/json')
      parser ??= loadJsonParser()
      await (await parser)(ctx, async () => {})
    }
    const body: unknown = ctx.request.body
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new BadRequestError('JSON body must be an object')
    await next()
  }
}

/**
 * The identity stored by `requireEditor`.
 * @param ctx the Koa context
 * @returns the identity
 */
export function identityOf (ctx: Context): Identity {
  return (ctx.state as EditorState).identity
}
