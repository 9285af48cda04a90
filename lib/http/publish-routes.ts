/** Draft and publish routes of the editor API: draft status and discard, publish, deployment. */
import type Router from '@koa/router'
import type { Services } from '../services.js'
import { BadRequestError } from '../errors.js'
import { jsonBody, identityOf } from './guards.js'
import { queryString } from './query.js'
import { loadOnFirstUse } from './load-on-first-use.js'

/** Registers draft, publish and deployment routes on the (authenticated, CSRF-checked) API router. */
export function publishRoutes (router: Router, services: Services): void {
  const commands = loadOnFirstUse(async () => {
    const [schemas, { draftStatus, discardDrafts }, { publish }] = await Promise.all([
      import('../commands/command-schemas.js'), import('../commands/drafts.js'), import('../commands/publish.js')
    ])
    return { validators: schemas.createCommandValidators(), draftStatus, discardDrafts, publish }
  })

  router.get('/draft', async (ctx) => {
    const { draftStatus } = await commands()
    ctx.body = await draftStatus({ services, identity: identityOf(ctx) })
  })

  router.delete('/draft', async (ctx) => {
    const { discardDrafts } = await commands()
    ctx.body = await discardDrafts({ services, identity: identityOf(ctx) }, {
      collection: queryString(ctx, 'collection'),
      id: queryString(ctx, 'id')
    })
  })

  router.post('/publish', jsonBody({ optional: true }), async (ctx) => {
    const { validators, publish } = await commands()
    const body = validators.publish(ctx.request.body)
    if (body.id !== undefined && body.collection === undefined) throw new BadRequestError('id needs collection', { field: 'collection' })
    ctx.body = await publish({ services, identity: identityOf(ctx) }, body)
  })

  router.get('/deployment', async (ctx) => {
    const report = await services.deployment.read()
    // `sync`: the git remote's state (CONTRACT 13), present when a remote is configured.
    ctx.body = services.remote.enabled ? { ...report, sync: services.remote.state.report } : report
  })
}
