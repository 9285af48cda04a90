/** `POST /upload` (multipart, one part `file`, parsed into `.git/cms/uploads-tmp/req-XXXXXX/`), and serving uploads under `uploadsUrl`. */
import { mkdir, mkdtemp, rm, stat, realpath } from 'node:fs/promises'
import type { IncomingMessage } from 'node:http'
import { createReadStream } from 'node:fs'
import { finished } from 'node:stream/promises'
import path from 'node:path'
import type Router from '@koa/router'
import type { Middleware } from 'koa'
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors.js'
import type { Services } from '../services.js'
import { resolveUploadTarget, storeUpload } from '../commands/store-upload.js'
import { UPLOAD_TYPES } from '../storage/media-index.js'
import { identityOf, queryEntry } from './request.js'
import { isInside } from '../storage/safe-path.js'

interface UploadedFile { filepath: string, originalFilename: string | null }

/** Registers the upload route on the (authenticated, CSRF-checked) API router. */
export function uploadRoutes (router: Router, services: Services): void {
  const tempDir = path.join(services.stateDir, 'uploads-tmp')
  const maxBytes = services.config.uploads.maxBytes

  router.post('/upload', async (ctx) => {
    if (ctx.is('multipart/form-data') === false || ctx.is('multipart/form-data') === null) {
      throw new UnsupportedMediaTypeError('Upload must be multipart/form-data with one part named file')
    }
    // Where it goes is decided (and bad names refused) before the body is read.
    const target = await resolveUploadTarget({ services, identity: identityOf(ctx) }, queryEntry(ctx))
    await mkdir(tempDir, { recursive: true })
    // A directory per request, removed whole at its end: a refused request leaves nothing, even a part formidable was writing.
    const requestDir = await mkdtemp(path.join(tempDir, 'req-'))
    try {
      // koa-body and formidable load on the first upload, not at start-up.
      const { koaBody } = await import('koa-body')
      const parse = koaBody({
        multipart: true,
        json: false,
        urlencoded: false,
        text: false,
        formidable: {
          uploadDir: requestDir,
          maxFileSize: maxBytes,
          maxTotalFileSize: maxBytes,
          maxFiles: 1,
          maxFields: 10,
          maxFieldsSize: 64 * 1024,
          allowEmptyFiles: false,
          keepExtensions: false
        }
      })
      await parse(ctx, async () => {}).catch(async (err: unknown) => {
        await requestEnded(ctx.req)
        const e = err as { httpCode?: number, code?: number, message?: string }
        if (/maxFiles|maxFields/i.test(String(e.message))) throw new BadRequestError('Send exactly one file part named file', { field: 'file' })
        if (e.httpCode === 413 || /maxFileSize|maxTotalFileSize/.test(String(e.message))) {
          throw new PayloadTooLargeError(`Upload larger than ${maxBytes} bytes`, { maxBytes })
        }
        throw new BadRequestError('Malformed multipart body')
      })
      const files = (ctx.request.files ?? {}) as Record<string, unknown>
      const names = Object.keys(files)
      const file = files.file as UploadedFile | UploadedFile[] | undefined
      if (file === undefined || Array.isArray(file) || names.length !== 1) {
        throw new BadRequestError('Send exactly one file part named file', { field: 'file' })
      }
      ctx.body = await storeUpload({ services, identity: identityOf(ctx) }, {
        tempFile: file.filepath,
        originalName: file.originalFilename ?? 'file',
        target
      })
    } finally {
      await rm(requestDir, { recursive: true, force: true })
    }
  })
}

/** Reads and drops the rest of a refused body (at most 2 s), so the client gets the answer, not a reset. */
async function requestEnded (req: IncomingMessage): Promise<void> {
  if (req.readableEnded || req.destroyed) return
  req.resume()
  await finished(req, { signal: AbortSignal.timeout(2000) }).catch(() => {})
}

const MIME_BY_EXT = new Map(Object.values(UPLOAD_TYPES).map(t => [t.ext, t.mime]))

/** Serves stored uploads: only `<uploadsUrl>/YYYY/MM/<name>.<allowed ext>` files really inside `uploadsDir`, `nosniff`. */
export function serveUploads (services: Services): Middleware {
  // The top-level uploads folder and every collection's own (`uploadsDir`/`uploadsUrl`).
  const roots = [{ prefix: services.config.uploadsUrl, dir: services.config.uploadsDir }]
  for (const def of Object.values(services.config.collections)) {
    if (def.uploadsDir !== undefined && def.uploadsUrl !== undefined) roots.push({ prefix: def.uploadsUrl, dir: def.uploadsDir })
  }
  const served = roots.map(r => ({ prefix: r.prefix.replace(/\/+$/, '') + '/', root: path.join(services.repoDir, r.dir) }))
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') { await next(); return }
    for (const { prefix, root } of served) {
      if (!ctx.path.startsWith(prefix)) continue
      const rel = ctx.path.slice(prefix.length)
      const m = /^([0-9]{4})\/([0-9]{2})\/([a-z0-9-]{1,80})\.([a-z]{2,5})$/.exec(rel)
      const mime = m === null ? undefined : MIME_BY_EXT.get(m[4]!)
      if (m === null || mime === undefined) continue
      try {
        const real = await realpath(path.join(root, rel))
        if (!isInside(await realpath(root), real)) continue
        const st = await stat(real)
        if (!st.isFile()) continue
        ctx.set('Content-Type', mime)
        ctx.set('X-Content-Type-Options', 'nosniff')
        ctx.set('Cache-Control', 'public, max-age=31536000, immutable')
        ctx.length = st.size
        // For HEAD Koa sends the headers only (the length included) and closes the stream.
        ctx.body = createReadStream(real)
        return
      } catch {}
    }
    await next()
  }
}
