/**
 * Reading a request after the API router's guards: query parameters strictly (one value each, of the
 * expected type, or a 400), the JSON body (415/413/400), the raw body and the identity.
 */
import type { Context } from 'koa'
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.js'
import type { Identity } from '../config.js'
import { isReservedKey } from '../content/reserved-keys.js'
import { dataTooDeep, parseWholeNumber } from '../content/data-depth.js'

/** Maximum JSON body size. */
const JSON_LIMIT_BYTES = 1024 * 1024
/** The longest `q` of every route (the entries list, the dashboard search, the media library). */
const MAX_QUERY_LENGTH = 200

/** A single string query parameter; a `q` at most MAX_QUERY_LENGTH characters. */
export function queryString (ctx: Context, name: string): string | undefined {
  const value = ctx.query[name]
  if (value === undefined) return undefined
  if (Array.isArray(value)) throw new BadRequestError(`Query parameter ${name} must be given once`, { field: name })
  if (name === 'q' && value.length > MAX_QUERY_LENGTH) throw new BadRequestError(`Query parameter q must be at most ${MAX_QUERY_LENGTH} characters`, { field: 'q' })
  return value
}

/** A positive integer query parameter, `fallback` when absent. */
export function queryPositiveInt (ctx: Context, name: string, fallback: number): number {
  const value = parseWholeNumber(queryString(ctx, name), fallback, 1, 9)
  if (value === null) throw new BadRequestError(`Query parameter ${name} must be a positive integer`, { field: name })
  return value
}

/** A query parameter that must be one of a few words. */
export function queryEnum<T extends string> (ctx: Context, name: string, allowed: readonly T[]): T | undefined {
  const raw = queryString(ctx, name)
  if (raw === undefined || raw === '') return undefined
  if (!(allowed as readonly string[]).includes(raw)) throw new BadRequestError(`Query parameter ${name} must be one of ${allowed.join(', ')}`, { field: name })
  return raw as T
}

/** A query parameter naming a top-level data field (1 to 128 characters, no control characters, `.`, `/` or prototype key). */
export function queryFieldName (ctx: Context, name: string): string | undefined {
  const raw = queryString(ctx, name)
  if (raw === undefined || raw === '') return undefined
  // eslint-disable-next-line no-control-regex
  if (raw.length > 128 || /[\u0000-\u001f\u007f./]/.test(raw) || isReservedKey(raw)) {
    throw new BadRequestError(`Query parameter ${name} must name a field of the collection`, { field: name })
  }
  return raw
}

/** The `collection` and `id` query parameters of a request about one entry (the command checks them). */
export function queryEntry (ctx: Context): { collection: string | undefined, id: string | undefined } {
  return { collection: queryString(ctx, 'collection'), id: queryString(ctx, 'id') }
}

/**
 * Reads a JSON object body: 415 for another type or an encoded body, 413 over `maxBytes` (1 MiB),
 * 400 when missing (`{}` when `optional`), malformed, not an object, or holding a prototype key.
 * @param ctx the request
 * @param opts whether a request may come without a body, and the largest body accepted
 * @returns the body
 */
export async function readJsonBody (ctx: Context, opts: { optional?: boolean, maxBytes?: number } = {}): Promise<Record<string, unknown>> {
  // No body: no length other than 0, no transfer encoding.
  const length = ctx.get('content-length')
  if ((length === '' || length === '0') && ctx.get('transfer-encoding') === '') {
    if (opts.optional === true) return {}
    throw new BadRequestError('A JSON body is required')
  }
  if (ctx.is('application/json') === false) throw new UnsupportedMediaTypeError('Request body must be application/json')
  if (!['', 'identity'].includes(ctx.get('content-encoding'))) throw new UnsupportedMediaTypeError('A JSON body is sent without content-encoding')
  const text = (await readBody(ctx.req, opts.maxBytes ?? JSON_LIMIT_BYTES)).toString('utf8').replace(/^\uFEFF/, '')
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new BadRequestError('Malformed JSON body')
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new BadRequestError('JSON body must be an object')
  // Only letters or \u escapes spell a prototype key; dataTooDeep's walk has no recursion (data may nest thousands deep).
  if (/__proto__|prototype|constructor|\\u/.test(text)) {
    dataTooDeep(body, 0, Infinity, (key) => {
      if (isReservedKey(key)) throw new BadRequestError(`JSON body must not hold the key ${key}`)
    })
  }
  return body as Record<string, unknown>
}

/**
 * Reads a raw body (JSON bodies, and the sync webhook's, whose signature is over the exact bytes),
 * refusing it (413) as soon as it is declared or grows over `maxBytes`, and (400) when it ends early.
 * @param req the request stream and its headers
 * @param maxBytes the largest body accepted
 * @returns the body's bytes
 */
export async function readBody (req: NodeJS.ReadableStream & { headers: Record<string, string | string[] | undefined> }, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0)
  if (declared > maxBytes) throw new PayloadTooLargeError('Request body too large', { limit: maxBytes })
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of req) {
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)
      size += buf.length
      if (size > maxBytes) throw new PayloadTooLargeError('Request body too large', { limit: maxBytes })
      chunks.push(buf)
    }
  } catch (err) {
    throw err instanceof PayloadTooLargeError ? err : new BadRequestError('The request body ended before its declared length')
  }
  return Buffer.concat(chunks)
}

/** The identity the API router stored. */
export function identityOf (ctx: Context): Identity {
  return (ctx.state as { identity: Identity }).identity
}

/** Wraps a dynamic import so that it runs once, on the first call (commands load on their first request, not at start). */
export function loadOnFirstUse<T> (load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | null = null
  return async () => await (loading ??= load())
}
