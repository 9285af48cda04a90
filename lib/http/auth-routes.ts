/**
 * The public auth routes under `apiBasePath`: login (password mode only), session, logout.
 * Login and logout need no request-forgery header; login takes a JSON body `{ password, name? }`.
 */
import type Router from '@koa/router'
import type { Context } from 'koa'
import type { Services } from '../services.js'
import { BadRequestError, ConflictError, UnsupportedMediaTypeError } from '../errors.js'
import { safeRedirectTarget } from '../auth/redirect-target.js'
import { cleanEditorName, MAX_EDITOR_NAME } from '../auth/identity.js'
import { isReservedKey } from '../content/reserved-keys.js'
import { readBody } from './read-body.js'

/** The largest login body: a password and a name. */
const LOGIN_BODY_BYTES = 16 * 1024

/** Registers the public auth routes. */
export function authRoutes (router: Router, services: Services): void {
  const { auth } = services

  router.post('/auth/login', async (ctx) => {
    // The provider is authoritative: say so before looking at the body.
    if (auth.mode === 'provider') throw new ConflictError('An external identity provider is authoritative; password sign-in is disabled')
    const { password, name } = await loginBody(ctx)
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

/**
 * Reads the login's JSON body (415 for another type or an encoded body, 413 over 16 KB, 400 when
 * missing, malformed, not an object or with a reserved key). Not koa-body: the first request after
 * a restart is a login, and koa-body's load (zod, formidable) was a tenth of a restart's CPU.
 */
async function loginBody (ctx: Context): Promise<{ password?: unknown, name?: unknown }> {
  const length = ctx.get('content-length')
  if ((length === '' || length === '0') && ctx.get('transfer-encoding') === '') throw new BadRequestError('A JSON body is required')
  if (ctx.is('application/json') === false) throw new UnsupportedMediaTypeError('Request body must be application/json')
  if (!['', 'identity'].includes(ctx.get('content-encoding'))) throw new UnsupportedMediaTypeError('A login body is sent without content-encoding')
  const text = (await readBody(ctx.req, LOGIN_BODY_BYTES)).toString('utf8')
  let body: unknown
  try {
    body = JSON.parse(text, (key, value: unknown) => {
      if (isReservedKey(key)) throw new BadRequestError(`JSON body must not hold the key ${key}`)
      return value
    })
  } catch (err) {
    throw err instanceof BadRequestError ? err : new BadRequestError('JSON body is malformed')
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new BadRequestError('JSON body must be an object')
  return body
}
