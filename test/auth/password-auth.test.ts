import t from 'tap'
import type { Context } from 'koa'
import { pino } from 'pino'
import { createAuth, type AuthService } from '../../lib/auth/create-auth.js'
import { normalizeConfig, type Identity } from '../../lib/config.js'
import { SESSION_TTL_MS, signSession } from '../../lib/auth/session-cookie.js'

const SECRET = 'a-session-secret-of-at-least-32-characters'
const START = 1_800_000_000_000

/** Password mode over a state directory, on a clock the test moves. */
async function make (dir: string, clock: { now: number }, password = 'pw'): Promise<PasswordMode> {
  const runtime = { password, sessionSecret: SECRET, secretGenerated: false, trustProxy: false, gitOnPublish: false }
  const auth = await createAuth({ config: normalizeConfig({}), runtime, stateDir: dir, log: pino({ level: 'silent' }), now: () => clock.now })
  return passwordMode(auth)
}

async function auth (t: { testdir: () => string }, clock: { now: number }): Promise<PasswordMode> {
  return await make(t.testdir(), clock)
}

/** A request with a session cookie (or none), and the Set-Cookie values the service answers with. */
function request (cookie?: string): { ctx: Context, set: string[] } {
  const set: string[] = []
  const ctx = {
    cookies: { get: () => cookie },
    append: (_name: string, value: string) => { set.push(value) },
    req: { headers: {}, socket: { remoteAddress: '127.0.0.1' } }
  }
  return { ctx: ctx as unknown as Context, set }
}

/** The service's login, identify and logout on cookie values. */
function passwordMode (a: AuthService) {
  return {
    login: async (password: string): Promise<{ cookie: string, identity: Identity }> => {
      const { ctx, set } = request()
      const identity = await a.login!(ctx, password)
      return { identity, cookie: /^cms_session=([^;]*)/.exec(set[0] ?? '')?.[1] ?? '' }
    },
    identify: async (cookie: string) => await a.identify(request(cookie).ctx),
    logout: async (cookie: string) => { await a.logout(request(cookie).ctx, '/') }
  }
}

type PasswordMode = ReturnType<typeof passwordMode>

t.test('a session cookie is accepted until it expires, and refused once logged out', async t => {
  const clock = { now: START }
  const a = await auth(t, clock)
  const { cookie, identity } = await a.login('pw')
  t.same(await a.identify(cookie), identity, 'first request: verified')
  t.same(await a.identify(cookie), identity, 'second request')
  clock.now = START + SESSION_TTL_MS - 1
  t.same(await a.identify(cookie), identity, 'just before expiry')
  clock.now = START + SESSION_TTL_MS
  t.equal(await a.identify(cookie), null, 'expired')
  t.equal(await a.identify(cookie), null, 'and stays expired')

  clock.now = START
  const second = await a.login('pw')
  t.same(await a.identify(second.cookie), second.identity)
  await a.logout(second.cookie)
  t.equal(await a.identify(second.cookie), null, 'revoked')
})

t.test('altered, forged and malformed cookies are refused', async t => {
  const clock = { now: START }
  const a = await auth(t, clock)
  const { cookie } = await a.login('pw')
  t.ok(await a.identify(cookie))
  const [payload, signature] = cookie.split('.') as [string, string]
  const flipped = signature.slice(0, -2) + (signature.at(-2) === 'A' ? 'B' : 'A') + signature.at(-1)!
  const cases: Record<string, string> = {
    'another signature': `${payload}.${flipped}`,
    'a trailing character': cookie + 'A',
    'a leading space': ' ' + cookie,
    'signed with another secret': signSession('another-secret-of-at-least-32-characters', { editorId: 'x', exp: START + 1000 }),
    'no signature': payload,
    'empty signature': payload + '.',
    'two dots': cookie + '.x',
    'not base64url': '%%%.%%%',
    'oversized': 'a'.repeat(5000) + '.' + signature,
    '__proto__': '__proto__',
    'empty': ''
  }
  for (const [name, value] of Object.entries(cases)) {
    t.equal(await a.identify(value), null, name)
    t.equal(await a.identify(value), null, `${name}, asked again`)
  }
  t.ok(await a.identify(cookie), 'control: the real cookie still works')
})

t.test('a session is bound to the password it was made with: a new password ends it, the same secret notwithstanding', async t => {
  const clock = { now: START }
  const dir = t.testdir()
  const before = await make(dir, clock)
  const { cookie, identity } = await before.login('pw')
  t.same(await before.identify(cookie), identity)
  t.same(await (await make(dir, clock)).identify(cookie), identity, 'same password after a restart: still signed in')
  const after = await make(dir, clock, 'a new password')
  t.equal(await after.identify(cookie), null, 'a new CMS_EDIT_PASSWORD ends the old session')
  const fresh = await after.login('a new password')
  t.same(await after.identify(fresh.cookie), fresh.identity, 'a login under the new password works')
  t.equal(await before.identify(fresh.cookie), null, 'and means nothing under the old one')
  t.match(identity.id, /^[A-Za-z0-9_-]{34}$/, 'the editorId keeps the identity grammar')
})

