import t from 'tap'
import { passwordAuth, type PasswordAuth } from '../../lib/auth/password-auth.js'
import { RevokedSessions } from '../../lib/auth/revocations.js'
import { SESSION_TTL_MS, signSession } from '../../lib/auth/session-cookie.js'

const SECRET = 'a-session-secret-of-at-least-32-characters'
const START = 1_800_000_000_000

async function auth (t: { testdir: () => string }, clock: { now: number }): Promise<PasswordAuth> {
  return passwordAuth({
    password: 'pw',
    sessionSecret: SECRET,
    revocations: await RevokedSessions.load(t.testdir(), clock.now),
    now: () => clock.now
  })
}

t.test('a session cookie is accepted until it expires, and refused once logged out', async t => {
  const clock = { now: START }
  const a = await auth(t, clock)
  const { cookie, identity } = a.login('pw', 'client')
  t.same(a.identify(cookie), identity, 'first request: verified')
  t.same(a.identify(cookie), identity, 'second request')
  clock.now = START + SESSION_TTL_MS - 1
  t.same(a.identify(cookie), identity, 'just before expiry')
  clock.now = START + SESSION_TTL_MS
  t.equal(a.identify(cookie), null, 'expired')
  t.equal(a.identify(cookie), null, 'and stays expired')

  clock.now = START
  const second = a.login('pw', 'client')
  t.same(a.identify(second.cookie), second.identity)
  await a.logout(second.cookie)
  t.equal(a.identify(second.cookie), null, 'revoked')
})

t.test('altered, forged and malformed cookies are refused', async t => {
  const clock = { now: START }
  const a = await auth(t, clock)
  const { cookie } = a.login('pw', 'client')
  t.ok(a.identify(cookie))
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
    t.equal(a.identify(value), null, name)
    t.equal(a.identify(value), null, `${name}, asked again`)
  }
  t.ok(a.identify(cookie), 'control: the real cookie still works')
})

t.test('a session is bound to the password it was made with: a new password ends it, the same secret notwithstanding', async t => {
  const clock = { now: START }
  const dir = t.testdir()
  const make = async (password: string): Promise<PasswordAuth> => passwordAuth({ password, sessionSecret: SECRET, revocations: await RevokedSessions.load(dir, clock.now), now: () => clock.now })
  const before = await make('pw')
  const { cookie, identity } = before.login('pw', 'client')
  t.same(before.identify(cookie), identity)
  t.same((await make('pw')).identify(cookie), identity, 'same password after a restart: still signed in')
  const after = await make('a new password')
  t.equal(after.identify(cookie), null, 'a new CMS_EDIT_PASSWORD ends the old session')
  const fresh = after.login('a new password', 'client')
  t.same(after.identify(fresh.cookie), fresh.identity, 'a login under the new password works')
  t.equal(before.identify(fresh.cookie), null, 'and means nothing under the old one')
  t.match(identity.id, /^[A-Za-z0-9_-]{34}$/, 'the editorId keeps the identity grammar')
})

