/** Read routes of the editor API: entries, schema, collections-metadata, render, blocks. */
import type Router from '@koa/router'
import type { Services } from '../services.js'
import { assertCollectionName, assertEntryId } from '../storage/names.js'
import { listEntries, DEFAULT_PAGE_SIZE } from '../commands/list-entries.js'
import { readSchema, listDynamicCollections } from '../commands/read-schema.js'
import { renderField, createRenderCache, listBlocks } from '../commands/markdown-body.js'
import { queryEntry, queryString, queryPositiveInt, queryEnum, queryFieldName } from './query.js'
import { SortedRowsCache } from '../commands/list-order.js'
import { identityOf } from './guards.js'

/** Registers the read routes on the (authenticated) API router. */
export function contentRoutes (router: Router, services: Services): void {
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
      drafts,
      collection,
      id,
      q,
      page: queryPositiveInt(ctx, 'page', 1),
      pageSize: queryPositiveInt(ctx, 'pageSize', DEFAULT_PAGE_SIZE),
      sort,
      order,
      draft,
      sortCache,
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
