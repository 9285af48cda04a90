/**
 * The public auth routes under `apiBasePath`: login (password mode only), session, logout.
 * Login and logout need no request-forgery header; login takes a JSON body `{ password, name? }`.
 */
import type Router from '@koa/router'
import type { Services } from '../services.js'
import { BadRequestError, ConflictError } from '../errors.js'
import { safeRedirectTarget } from '../auth/redirect-target.js'
import { jsonBody } from './guards.js'
import { cleanEditorName, MAX_EDITOR_NAME } from '../auth/identity.js'

/** Registers the public auth routes. */
export function authRoutes (router: Router, services: Services): void {
  const { auth } = services

  router.post('/auth/login', async (ctx, next) => {
    // The provider is authoritative: say so before looking at the body.
    if (auth.mode === 'provider') throw new ConflictError('An external identity provider is authoritative; password sign-in is disabled')
    await next()
  }, jsonBody(), async (ctx) => {
    const { password, name } = ctx.request.body as { password?: unknown, name?: unknown }
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
