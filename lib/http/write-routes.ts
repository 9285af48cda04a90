/** Write routes of the editor API: mutate, and history read/restore. */
import type Router from '@koa/router'
import type { Services } from '../services.js'
import { jsonBody, identityOf } from './guards.js'
import { queryString } from './query.js'
import { loadOnFirstUse } from './load-on-first-use.js'

/** Registers mutate and history routes on the (authenticated, CSRF-checked) API router. */
export function writeRoutes (router: Router, services: Services): void {
  const commands = loadOnFirstUse(async () => {
    const [schemas, { mutate }, { readHistory, restoreHistory }, { previewMarkdown }] = await Promise.all([
      import('../commands/command-schemas.js'), import('../commands/mutate.js'), import('../commands/history.js'), import('../commands/preview-markdown.js')
    ])
    return { validators: schemas.createCommandValidators(), mutate, readHistory, restoreHistory, previewMarkdown }
  })

  router.post('/mutate', jsonBody(), async (ctx) => {
    const { validators, mutate } = await commands()
    const cmd = validators.mutate(ctx.request.body)
    ctx.body = await mutate({ services, identity: identityOf(ctx) }, cmd)
  })

  // The Studio's live preview of unsaved Markdown (sanitized, size-limited; writes nothing).
  router.post('/preview', jsonBody(), async (ctx) => {
    const { previewMarkdown } = await commands()
    ctx.body = await previewMarkdown(ctx.request.body as Record<string, unknown>, services.markdown)
  })

  router.get('/history', async (ctx) => {
    const { readHistory } = await commands()
    ctx.body = await readHistory({ services, identity: identityOf(ctx) }, {
      collection: queryString(ctx, 'collection'),
      id: queryString(ctx, 'id')
    })
  })

  router.post('/history', jsonBody(), async (ctx) => {
    const { validators, restoreHistory } = await commands()
    const body = validators.restore(ctx.request.body)
    ctx.body = await restoreHistory({ services, identity: identityOf(ctx) }, body)
  })
}
