/**
 * The media library's routes (authenticated; DELETE needs the request-forgery header): `GET /media`,
 * `GET /media/references?path=`, `DELETE /media?path=[&force=true]` and `GET /media/file?path=` (the
 * bytes, for thumbnails of files not served under an uploads URL).
 */
import { createReadStream } from 'node:fs'
import { lstat, realpath } from 'node:fs/promises'
import path from 'node:path'
import type Router from '@koa/router'
import type { Services } from '../services.js'
import { BadRequestError, NotFoundError } from '../errors.js'
import type { MediaListParams } from '../commands/media-list.js'
import { isInside } from '../storage/safe-path.js'
import { queryString } from './query.js'
import { identityOf } from './guards.js'
import { loadOnFirstUse } from './load-on-first-use.js'

const LIST_PARAMS = ['folder', 'q', 'type', 'sort', 'order', 'page', 'pageSize', 'minSize', 'maxSize', 'after', 'before'] as const

/** Registers the media routes on the (authenticated, CSRF-checked) API router. */
export function mediaRoutes (router: Router, services: Services): void {
  const commands = loadOnFirstUse(async () => {
    const [{ listMedia }, { findMediaReferences, requireMediaFile }, { deleteMedia }] = await Promise.all([
      import('../commands/media-list.js'), import('../commands/media-references.js'), import('../commands/media-delete.js')
    ])
    return { listMedia, findMediaReferences, requireMediaFile, deleteMedia }
  })

  router.get('/media', async (ctx) => {
    const { listMedia } = await commands()
    const params: MediaListParams = {}
    for (const name of LIST_PARAMS) {
      const value = queryString(ctx, name)
      if (value !== undefined) params[name] = value
    }
    ctx.body = await listMedia({ services, identity: identityOf(ctx) }, params)
  })

  router.get('/media/references', async (ctx) => {
    const { findMediaReferences } = await commands()
    ctx.body = await findMediaReferences({ services, identity: identityOf(ctx) }, queryString(ctx, 'path'))
  })

  router.delete('/media', async (ctx) => {
    const force = queryString(ctx, 'force')
    if (force !== undefined && force !== 'true' && force !== 'false') throw new BadRequestError('force must be true or false', { field: 'force' })
    const { deleteMedia } = await commands()
    ctx.body = await deleteMedia({ services, identity: identityOf(ctx) }, queryString(ctx, 'path'), { force: force === 'true' })
  })

  router.get('/media/file', async (ctx) => {
    const { requireMediaFile } = await commands()
    const file = await requireMediaFile({ services, identity: identityOf(ctx) }, queryString(ctx, 'path'))
    const abs = path.join(services.repoDir, ...file.path.split('/'))
    const root = services.media.rootOf(file.path)
    const st = await lstat(abs).catch(() => null)
    // Never through a link, never outside the file's media folder.
    if (root === undefined || st === null || !st.isFile() || !isInside(await realpath(root.dir), await realpath(abs))) {
      throw new NotFoundError('No such file in the media library', { path: file.path })
    }
    ctx.set('Content-Type', file.type)
    ctx.set('X-Content-Type-Options', 'nosniff')
    // An SVG opened directly runs no script and loads nothing.
    ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox")
    ctx.set('Cache-Control', 'private, no-cache')
    ctx.set('Last-Modified', new Date(st.mtimeMs).toUTCString())
    ctx.length = st.size
    ctx.body = createReadStream(abs)
  })
}
