/**
 * The editor API under `apiBasePath`: the public auth routes, then every other route behind
 * authentication (401) and, on mutating methods, the request-forgery header (403). The commands of
 * writes, drafts, publish, media and search load on their first request (35 modules a restart skips).
 */
import { createReadStream } from 'node:fs'
import Router from '@koa/router'
import compose from 'koa-compose'
import type { Context, Middleware } from 'koa'
import type { Services } from '../services.js'
import type { CommandContext } from '../commands/command-context.js'
import type { MediaListParams } from '../commands/media-list.js'
import { BadRequestError, ConflictError, MissingCsrfHeaderError, NotFoundError, UnauthorizedError } from '../errors.js'
import { cleanEditorName, MAX_EDITOR_NAME } from '../auth/identity.js'
import { assertCollectionName, assertEntryId } from '../storage/names.js'
import { listEntries, DEFAULT_PAGE_SIZE } from '../commands/list-entries.js'
import { readSchema, listDynamicCollections } from '../commands/read-schema.js'
import { renderField, createRenderCache, listBlocks, previewMarkdown } from '../commands/markdown-body.js'
import { SortedRowsCache } from '../commands/list-order.js'
import { identityOf, loadOnFirstUse, queryEntry, queryEnum, queryFieldName, queryPositiveInt, queryString, readJsonBody } from './request.js'
import { safeRedirectTarget } from '../auth/redirect-target.js'
import { uploadRoutes } from './upload-routes.js'

/** Builds the API middleware. */
export function apiMiddleware (services: Services): Middleware {
  const base = services.config.apiBasePath
  const isApi = (path: string): boolean => path === base || path.startsWith(base + '/')

  const publicRouter = new Router({ prefix: base })
  authRoutes(publicRouter, services)

  const editorRouter = new Router({ prefix: base })
  readRoutes(editorRouter, services)
  mediaRoutes(editorRouter, services)
  writeRoutes(editorRouter, services)
  uploadRoutes(editorRouter, services)

  const guarded = compose<Parameters<Middleware>[0]>([
    async (ctx, next) => {
      const identity = await services.auth.identify(ctx)
      if (identity === null) throw new UnauthorizedError('Authentication required')
      if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && ctx.get('x-cms-request') !== '1') throw new MissingCsrfHeaderError()
      ctx.state.identity = identity
      await next()
    },
    editorRouter.routes() as unknown as Middleware,
    editorRouter.allowedMethods() as unknown as Middleware,
    () => { throw new NotFoundError('No such API route') }
  ])
  const publicRoutes = publicRouter.routes() as unknown as Middleware
  return async (ctx, next) => {
    if (!isApi(ctx.path)) { await next(); return }
    ctx.set('Cache-Control', 'no-store')
    await publicRoutes(ctx, async () => { await guarded(ctx, async () => {}) })
  }
}

/** The largest login body: a password and a name. */
const LOGIN_BODY_BYTES = 16 * 1024

/** The public auth routes. */
function authRoutes (router: Router, services: Services): void {
  const { auth } = services

  router.post('/auth/login', async (ctx) => {
    // The provider is authoritative: say so before looking at the body.
    if (auth.login === null) throw new ConflictError('An external identity provider is authoritative; password sign-in is disabled')
    const { password, name } = await readJsonBody(ctx, { maxBytes: LOGIN_BODY_BYTES })
    if (typeof password !== 'string' || password === '') throw new BadRequestError('password must be a non-empty string')
    if (name !== undefined && typeof name !== 'string') throw new BadRequestError('name must be a string', { field: 'name' })
    if (name !== undefined && cleanEditorName(name).length > MAX_EDITOR_NAME) throw new BadRequestError(`name is longer than ${MAX_EDITOR_NAME} characters`, { field: 'name' })
    const identity = await auth.login(ctx, password, name)
    ctx.body = { ok: true, identity }
  })

  router.get('/auth/session', async (ctx) => {
    const identity = await auth.identify(ctx)
    ctx.body = identity === null ? { authenticated: false, identity: null } : { authenticated: true, identity }
  })

  router.post('/auth/logout', async (ctx) => {
    // Logout always succeeds: an odd return target falls back to '/' instead of a 400.
    const { redirect } = await auth.logout(ctx, safeRedirectTarget(ctx.query.redirectTo))
    ctx.body = redirect === null ? { ok: true } : { ok: true, redirect }
  })
}

/** Entries, schema, collections-metadata, render, blocks. */
function readRoutes (router: Router, services: Services): void {
  // Sorted orders of big collections, kept per instance until the collection changes.
  const sortCache = new SortedRowsCache()
  router.get('/entries', async (ctx) => {
    const collection = assertCollectionName(queryString(ctx, 'collection'))
    const rawId = queryString(ctx, 'id')
    const id = rawId === undefined ? undefined : assertEntryId(rawId)
    const q = queryString(ctx, 'q')
    const sort = queryFieldName(ctx, 'sort')
    const order = queryEnum(ctx, 'order', ['asc', 'desc'] as const)
    const draft = queryEnum(ctx, 'draft', ['all', 'only', 'none'] as const)
    // The reader's own drafts are laid over base (the draft store caches by ref value: no git process).
    const drafts = await services.drafts.list(identityOf(ctx).id, { collection, ...(id !== undefined ? { id } : {}) })
    ctx.body = await listEntries(services.content, services.search, {
      drafts, collection, id, q,
      page: queryPositiveInt(ctx, 'page', 1),
      pageSize: queryPositiveInt(ctx, 'pageSize', DEFAULT_PAGE_SIZE),
      sort, order, draft, sortCache,
      locale: queryString(ctx, 'locale'),
      repoDir: services.repoDir
    })
  })

  router.get('/schema', async (ctx) => {
    ctx.body = await readSchema(services.content, assertCollectionName(queryString(ctx, 'collection')))
  })

  router.get('/collections-metadata', async (ctx) => {
    ctx.body = await listDynamicCollections(services.content)
  })

  // A Markdown field as this editor sees it, with source hints (for pages another generator rendered).
  // The routes are registered once per instance, so the cache is the instance's own.
  const renderCache = createRenderCache()
  router.get('/render', async (ctx) => {
    const params = { ...queryEntry(ctx), field: queryString(ctx, 'field') }
    ctx.body = await renderField({ services, identity: identityOf(ctx) }, params, renderCache)
  })

  // A Markdown body's source blocks as this editor sees it, to pair with a generator's rendering.
  router.get('/blocks', async (ctx) => {
    const params = { ...queryEntry(ctx), field: queryString(ctx, 'field') }
    ctx.body = await listBlocks({ services, identity: identityOf(ctx) }, params)
  })
}

/** The commands of media, writes, drafts, publish and search, loaded on the first request that needs one (not at start). */
const commands = loadOnFirstUse(async () => {
  const [schemas, { mutate }, history, drafts, { publish }, { searchEverywhere }, list, deletion] = await Promise.all([
    import('../commands/command-schemas.js'), import('../commands/mutate.js'), import('../commands/history.js'),
    import('../commands/drafts.js'), import('../commands/publish.js'), import('../commands/search-everywhere.js'),
    import('../commands/media-list.js'), import('../commands/media-delete.js')
  ])
  return { validators: schemas.commandValidators, mutate, ...history, ...drafts, publish, searchEverywhere, ...list, ...deletion }
})

const LIST_PARAMS = ['folder', 'q', 'type', 'sort', 'order', 'page', 'pageSize', 'minSize', 'maxSize', 'after', 'before'] as const

/** The media library: list, references, delete, and the bytes of a file (thumbnails outside an uploads URL). */
function mediaRoutes (router: Router, services: Services): void {
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
    const { requireMediaFile, mediaFileOnDisk } = await commands()
    const file = await requireMediaFile({ services, identity: identityOf(ctx) }, queryString(ctx, 'path'))
    const { abs, st } = await mediaFileOnDisk(services, file)
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

/** Writes, drafts, publish, deployment and search. */
function writeRoutes (router: Router, services: Services): void {
  const as = (ctx: Context): CommandContext => ({ services, identity: identityOf(ctx) })

  router.post('/mutate', async (ctx) => {
    const body = await readJsonBody(ctx)
    const { validators, mutate } = await commands()
    ctx.body = await mutate(as(ctx), validators.mutate(body))
  })

  // The Studio's live preview of unsaved Markdown (sanitized, size-limited; writes nothing).
  router.post('/preview', async (ctx) => {
    ctx.body = await previewMarkdown(await readJsonBody(ctx), services.markdown)
  })

  router.get('/history', async (ctx) => {
    const { readHistory } = await commands()
    ctx.body = await readHistory(as(ctx), queryEntry(ctx))
  })

  router.post('/history', async (ctx) => {
    const body = await readJsonBody(ctx)
    const { validators, restoreHistory } = await commands()
    ctx.body = await restoreHistory(as(ctx), validators.restore(body))
  })

  router.get('/draft', async (ctx) => {
    const { draftStatus } = await commands()
    ctx.body = await draftStatus(as(ctx))
  })

  router.delete('/draft', async (ctx) => {
    const { discardDrafts } = await commands()
    ctx.body = await discardDrafts(as(ctx), queryEntry(ctx))
  })

  router.post('/publish', async (ctx) => {
    const raw = await readJsonBody(ctx, { optional: true })
    const { validators, publish } = await commands()
    ctx.body = await publish(as(ctx), validators.publish(raw))
  })

  router.get('/deployment', async (ctx) => {
    const report = await services.deployment.read()
    // `sync`: the git remote's state (CONTRACT 13), present when a remote is configured.
    ctx.body = services.remote.enabled ? { ...report, sync: services.remote.state.report } : report
  })

  router.get('/search', async (ctx) => {
    const { searchEverywhere } = await commands()
    ctx.body = await searchEverywhere(as(ctx), queryString(ctx, 'q'))
  })
}
