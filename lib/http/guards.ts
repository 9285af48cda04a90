/**
 * What the API routes share after the router's guards (authentication 401, request-forgery header
 * 403): the body check (415/413/400) and the identity. Permission checks (403) happen in commands,
 * after the payload is validated.
 */
import type { Middleware, Context } from 'koa'
import { UnsupportedMediaTypeError, BadRequestError } from '../errors.js'
import type { Identity } from '../config.js'

/** Koa state set by the API router once the editor is known. */
interface EditorState {
  identity: Identity
}

/** Maximum JSON body size. */
const JSON_LIMIT_BYTES = 1024 * 1024

/**
 * Parses a JSON body with koa-body (415 for another type, 413 over 1 MiB, 400 when malformed, not an
 * object, with a `__proto__` key or not matching its declared length). An empty body reads as `{}`.
 */
export function jsonBody (opts: { optional?: boolean } = {}): Middleware {
  let parser: Middleware | undefined
  return async (ctx, next) => {
    const length = ctx.get('content-length')
    const hasBody = (length !== '' && length !== '0') || ctx.get('transfer-encoding') !== ''
    if (!hasBody) {
      if (opts.optional !== true) throw new BadRequestError('A JSON body is required')
      ctx.request.body = {}
      await next()
      return
    }
    if (ctx.is('application/json') === false) throw new UnsupportedMediaTypeError('Request body must be application/json')
    // koa-body (zod, formidable) loads on the first body, not with this module.
    parser ??= (await import('koa-body')).koaBody(JSON_PARSER_OPTIONS)
    await parser(ctx, async () => {})
    const body: unknown = ctx.request.body
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new BadRequestError('JSON body must be an object')
    await next()
  }
}

const JSON_PARSER_OPTIONS = {
  json: true,
  multipart: false,
  urlencoded: false,
  text: false,
  jsonStrict: true,
  jsonLimit: JSON_LIMIT_BYTES,
  includeUnparsed: false
} as const

/** The identity the API router stored. */
export function identityOf (ctx: Context): Identity {
  return (ctx.state as EditorState).identity
}
