/**
 * `GET /search?q=`: one search over every collection, grouped by collection with snippets.
 */
import type Router from '@koa/router'
import type { Services } from '../services.js'
import { identityOf } from './guards.js'
import { queryString } from './query.js'
import { loadOnFirstUse } from './load-on-first-use.js'

/** Registers the search route on the (authenticated) API router. */
export function searchRoutes (router: Router, services: Services): void {
  const command = loadOnFirstUse(async () => await import('../commands/search-everywhere.js'))
  router.get('/search', async (ctx) => {
    const { searchEverywhere } = await command()
    ctx.body = await searchEverywhere({ services, identity: identityOf(ctx) }, queryString(ctx, 'q'))
  })
}
