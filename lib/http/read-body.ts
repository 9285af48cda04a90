/**
 * Reads a request's raw body up to a byte limit, for the two routes that read their body without
 * koa-body (the sync webhook, which must check a signature over the exact bytes, and the login).
 */
import { PayloadTooLargeError } from '../errors.js'

/**
 * Reads the whole body, refusing it (413) as soon as it is declared or grows over `maxBytes`.
 * @param req the request stream and its headers
 * @param maxBytes the largest body accepted
 * @returns the body's bytes
 */
export async function readBody (req: NodeJS.ReadableStream & { headers: Record<string, string | string[] | undefined> }, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0)
  if (declared > maxBytes) throw new PayloadTooLargeError('Request body too large', { limit: maxBytes })
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)
    size += buf.length
    if (size > maxBytes) throw new PayloadTooLargeError('Request body too large', { limit: maxBytes })
    chunks.push(buf)
  }
  return Buffer.concat(chunks)
}
