/**
 * Sending a built browser asset (Studio or inline editor): revalidated by a content hash, so a
 * browser never runs a stale bundle after an upgrade and never downloads an unchanged one twice.
 */
import { createHash } from 'node:crypto'
import type { Context } from 'koa'

/**
 * Answers with the asset's bytes, or 304 when the client's ETag matches.
 * @param ctx the Koa context
 * @param bytes the asset's content
 * @param type its content type
 */
export function sendAsset (ctx: Context, bytes: Buffer, type: string): void {
  ctx.set('Cache-Control', 'no-cache')
  ctx.set('X-Content-Type-Options', 'nosniff')
  ctx.etag = createHash('sha256').update(bytes).digest('base64url').slice(0, 27)
  ctx.type = type
  ctx.status = 200
  if (ctx.fresh) { ctx.status = 304; return }
  // Koa sends only the headers (with the length) for HEAD.
  ctx.body = bytes
}
