/**
 * The JSON body of an ordinary editor request (a save: ~100 bytes) read without koa-body: profiled
 * (issue 18), koa-body with co-body, raw-body, iconv-lite and bourne was about a fifth of a save's
 * busy time on the service's thread. Only the plain case is read here: `application/json` (or with
 * `charset=utf-8`), no content encoding, a declared length up to SMALL_JSON_MAX_BYTES; every other
 * request keeps going through koa-body. What koa-body refuses is refused here the same way: a body
 * whose first character is not `{` or `[` or that is not JSON (400), an object with a `__proto__`
 * key anywhere (400, as @hapi/bourne with `protoAction: 'error'`), a body that does not match its
 * declared length (400). The text is UTF-8 with a leading byte order mark dropped, as co-body reads it.
 */
import type { IncomingMessage } from 'node:http'
import { BadRequestError } from '../errors.js'

/** The largest declared body read here (larger ones go to koa-body and its 1 MiB limit). */
export const SMALL_JSON_MAX_BYTES = 64 * 1024

/** RFC 7159 whitespace, then an object or an array (co-body's strict mode). */
const STRICT_JSON_START = /^[\x20\x09\x0a\x0d]*[[{]/
/** @hapi/bourne's test for a `"__proto__":` key in the text, escapes included. */
const PROTO_KEY = /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/
const PLAIN_JSON_TYPE = /^application\/json(?:\s*;\s*charset="?utf-8"?)?$/i

/**
 * The declared length of a request this module reads, or -1 when koa-body must read it (another
 * type or charset, a content encoding, no or a big declared length, a method koa-body does not parse).
 * @param req the request
 * @returns the byte length, or -1
 */
export function smallJsonLength (req: IncomingMessage): number {
  const method = req.method
  if (method !== 'POST' && method !== 'PUT' && method !== 'PATCH') return -1
  const headers = req.headers
  const type = headers['content-type']
  if (type === undefined || !PLAIN_JSON_TYPE.test(type)) return -1
  if (headers['content-encoding'] !== undefined || headers['transfer-encoding'] !== undefined) return -1
  const length = headers['content-length']
  if (length === undefined || !/^\d{1,6}$/.test(length)) return -1
  const n = Number(length)
  return n > 0 && n <= SMALL_JSON_MAX_BYTES ? n : -1
}

/**
 * Reads and parses a body `smallJsonLength` accepted.
 * @param req the request
 * @param length its declared length
 * @returns the parsed value (an object or an array); throws BadRequestError (400) when refused
 */
export async function readSmallJson (req: IncomingMessage, length: number): Promise<unknown> {
  const bytes = await readExactly(req, length)
  let text = bytes.toString('utf8')
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
  if (!STRICT_JSON_START.test(text)) throw new BadRequestError('Malformed JSON body')
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new BadRequestError('Malformed JSON body')
  }
  if (PROTO_KEY.test(text) && hasProtoKey(value)) throw new BadRequestError('Malformed JSON body: forbidden __proto__ key')
  return value
}

/** Whether any object in a parsed value has an own `__proto__` key (breadth first, no recursion). */
function hasProtoKey (value: unknown): boolean {
  let next: unknown[] = [value]
  while (next.length > 0) {
    const nodes = next
    next = []
    for (const node of nodes) {
      if (node === null || typeof node !== 'object') continue
      if (Object.hasOwn(node, '__proto__')) return true
      for (const child of Object.values(node)) if (child !== null && typeof child === 'object') next.push(child)
    }
  }
  return false
}

/** The request's body, refused (400) when it ends before or runs past its declared length. */
async function readExactly (req: IncomingMessage, length: number): Promise<Buffer> {
  return await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = []
    let received = 0
    const done = (err: Error | null): void => {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
      req.off('close', onClose)
      if (err !== null) { reject(err); return }
      resolve(chunks.length === 1 ? chunks[0] as Buffer : Buffer.concat(chunks, received))
    }
    const onData = (chunk: Buffer): void => {
      received += chunk.length
      if (received > length) { done(new BadRequestError('Request body does not match its Content-Length')); return }
      chunks.push(chunk)
    }
    const onEnd = (): void => { done(received === length ? null : new BadRequestError('Request body does not match its Content-Length')) }
    const onError = (err: Error): void => { done(err) }
    const onClose = (): void => { if (!req.complete) done(new BadRequestError('Request aborted')) }
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
    req.on('close', onClose)
  })
}
