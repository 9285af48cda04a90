/**
 * Sending a built browser asset (Studio or inline editor): revalidated by a content hash, so a
 * browser never runs a stale bundle after an upgrade and never downloads an unchanged one twice.
 */
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import type { Context } from 'koa'

/** The encodings the build writes beside a Studio asset (scripts/build-browser.mjs), best first. */
const PRECOMPRESSED = [['br', '.br'], ['gzip', '.gz']] as const

/**
 * Where the bundled browser code is (the folder holding `marker`): next to the compiled file
 * (`dist/lib/http/` -> `dist/browser/`), or from the TypeScript sources (tests) `lib/http/` -> `dist/browser/`.
 */
export function browserAssetDir (marker: 'studio.js' | 'bootstrap.js'): string | null {
  const candidates = ['../../browser/', '../../dist/browser/'].map(rel => fileURLToPath(new URL(rel, import.meta.url)))
  return candidates.find(dir => existsSync(path.join(dir, marker))) ?? null
}

/**
 * Answers with the asset's bytes (or `encoded`, with its own ETag), or 304 when the client's ETag
 * matches; `cacheControl` stays `no-cache` unless the URL names this content.
 */
export function sendAsset (ctx: Context, bytes: Buffer, type: string, encoded?: { encoding: string, bytes: Buffer }, cacheControl = 'no-cache'): void {
  ctx.set('Cache-Control', cacheControl)
  ctx.set('X-Content-Type-Options', 'nosniff')
  const tag = createHash('sha256').update(bytes).digest('base64url').slice(0, 27)
  ctx.etag = encoded === undefined ? tag : `${tag}-${encoded.encoding}`
  ctx.type = type
  ctx.status = 200
  if (ctx.fresh) { ctx.status = 304; return }
  if (encoded !== undefined) ctx.set('Content-Encoding', encoded.encoding)
  // Koa sends only the headers (with the length) for HEAD.
  ctx.body = encoded?.bytes ?? bytes
}

/**
 * Answers with a built asset, as the `.br` or `.gz` file the build wrote beside it when the client
 * accepts that encoding (koa-compress then leaves it alone), else as is. A compressed file older
 * than the asset (a partial rebuild) is not used.
 */
export async function sendBuiltAsset (ctx: Context, dir: string, name: string, type: string, cacheControl = 'no-cache'): Promise<void> {
  const file = path.join(dir, name)
  const [bytes, built] = await Promise.all([readFile(file), stat(file)])
  ctx.vary('Accept-Encoding')
  // Brotli whenever accepted (browsers list it after gzip, at the same weight).
  const chosen = PRECOMPRESSED.find(([encoding]) => ctx.acceptsEncodings(encoding) === encoding)
  const compressed = chosen === undefined
    ? null
    : await stat(file + chosen[1]).then(async st => st.mtimeMs >= built.mtimeMs ? await readFile(file + chosen[1]) : null, () => null)
  if (chosen !== undefined && compressed !== null) { sendAsset(ctx, bytes, type, { encoding: chosen[0], bytes: compressed }, cacheControl); return }
  sendAsset(ctx, bytes, type, undefined, cacheControl)
}
