/**
 * Write routes of the editor API: mutate, and history read/restore.
 */
import type Router from '@koa/router'
import type { Services } from '../services.js'
import { createCommandValidators } from '../commands/command-schemas.js'
import { mutate } from '../commands/mutate.js'
import { readHistory, restoreHistory } from '../commands/history.js'
import { previewMarkdown } from '../commands/preview-markdown.js'
import { jsonBody, identityOf } from './guards.js'
import { queryString } from './query.js'

/**
 * Registers mutate and history routes on the (authenticated, CSRF-checked) API router.
 * @param router the API router
 * @param services the instance
 */
export function writeRoutes (router: Router, services: Services): void {
  const validators = createCommandValidators()

  router.post('/mutate', jsonBody(), async (ctx) => {
    const cmd = validators.mutate(ctx.request.body)
    ctx.body = await mutate({ services, identity: identityOf(ctx) }, cmd)
  })

  // The Studio's live preview of unsaved Markdown (sanitized, size-limited; writes nothing).
  router.post('/preview', jsonBody(), async (ctx) => {
    ctx.body = await previewMarkdown(ctx.request.body as Record<string, unknown>, services.markdown)
  })

  router.get('/history', async (ctx) => {
    ctx.body = await readHistory({ services, identity: identityOf(ctx) }, {
      collection: queryString(ctx, 'collection'),
      id: queryString(ctx, 'id')
    })
  })

  router.post('/history', jsonBody(), async (ctx) => {
    const body = validators.restore(ctx.request.body)
    ctx.body = await restoreHistory({ services, identity: identityOf(ctx) }, body)
  })
}
