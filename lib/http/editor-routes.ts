/**
 * The editor API's writes, drafts, publish, deployment and search routes. Their commands load on the
 * first request, not at start: 35 modules (the write commands, their validators, `diff`) a restart
 * does not load before it answers.
 */
import type Router from '@koa/router'
import type { Context } from 'koa'
import type { Services } from '../services.js'
import type { CommandContext } from '../commands/command-context.js'
import { BadRequestError } from '../errors.js'
import { jsonBody, identityOf } from './guards.js'
import { queryEntry, queryString } from './query.js'
import { loadOnFirstUse } from './load-on-first-use.js'

/** Registers the routes on the (authenticated, CSRF-checked) API router. */
export function editorRoutes (router: Router, services: Services): void {
  const as = (ctx: Context): CommandContext => ({ services, identity: identityOf(ctx) })
  const writes = loadOnFirstUse(async () => {
    const [schemas, { mutate }, { readHistory, restoreHistory }, { previewMarkdown }] = await Promise.all([
      import('../commands/command-schemas.js'), import('../commands/mutate.js'), import('../commands/history.js'), import('../commands/preview-markdown.js')
    ])
    return { validators: schemas.commandValidators, mutate, readHistory, restoreHistory, previewMarkdown }
  })
  const publishing = loadOnFirstUse(async () => {
    const [schemas, { draftStatus, discardDrafts }, { publish }] = await Promise.all([
      import('../commands/command-schemas.js'), import('../commands/drafts.js'), import('../commands/publish.js')
    ])
    return { validators: schemas.commandValidators, draftStatus, discardDrafts, publish }
  })
  const search = loadOnFirstUse(async () => await import('../commands/search-everywhere.js'))

  router.post('/mutate', jsonBody(), async (ctx) => {
    const { validators, mutate } = await writes()
    ctx.body = await mutate(as(ctx), validators.mutate(ctx.request.body))
  })

  // The Studio's live preview of unsaved Markdown (sanitized, size-limited; writes nothing).
  router.post('/preview', jsonBody(), async (ctx) => {
    const { previewMarkdown } = await writes()
    ctx.body = await previewMarkdown(ctx.request.body as Record<string, unknown>, services.markdown)
  })

  router.get('/history', async (ctx) => {
    const { readHistory } = await writes()
    ctx.body = await readHistory(as(ctx), queryEntry(ctx))
  })

  router.post('/history', jsonBody(), async (ctx) => {
    const { validators, restoreHistory } = await writes()
    ctx.body = await restoreHistory(as(ctx), validators.restore(ctx.request.body))
  })

  router.get('/draft', async (ctx) => {
    const { draftStatus } = await publishing()
    ctx.body = await draftStatus(as(ctx))
  })

  router.delete('/draft', async (ctx) => {
    const { discardDrafts } = await publishing()
    ctx.body = await discardDrafts(as(ctx), queryEntry(ctx))
  })

  router.post('/publish', jsonBody({ optional: true }), async (ctx) => {
    const { validators, publish } = await publishing()
    const body = validators.publish(ctx.request.body)
    if (body.id !== undefined && body.collection === undefined) throw new BadRequestError('id needs collection', { field: 'collection' })
    ctx.body = await publish(as(ctx), body)
  })

  router.get('/deployment', async (ctx) => {
    const report = await services.deployment.read()
    // `sync`: the git remote's state (CONTRACT 13), present when a remote is configured.
    ctx.body = services.remote.enabled ? { ...report, sync: services.remote.state.report } : report
  })

  router.get('/search', async (ctx) => {
    const { searchEverywhere } = await search()
    ctx.body = await searchEverywhere(as(ctx), queryString(ctx, 'q'))
  })
}
