import t from 'tap'
import { access, readFile } from 'node:fs/promises'
import path from 'node:path'
import { gzipSync } from 'node:zlib'
import type { IncomingMessage } from 'node:http'
import { pino, type Logger } from 'pino'
import { startServer as startSiteServer, repoFingerprint, makeSite, TEST_PASSWORD, TEST_SECRET, type TestServer } from '../helpers/site.js'
import { signCookie, cookiePayload } from '../helpers/auth.js'
import { boundEditorId } from '../../lib/auth/session-cookie.js'
import type { AuthAdapter, ConfigInput, Identity } from '../../lib/config.js'

const API = '/api/cms'
const ENTRIES = `${API}/entries?collection=posts`
const HOUR = 60 * 60 * 1000

async function login (s: TestServer, password: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return await s.request(`${API}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ password })
  })
}

/** A logger that keeps its lines, so tests can check what was logged. */
function memoryLogger (): { logger: Logger, lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = []
  return { logger: pino({ level: 'info' }, { write: (line: string) => { lines.push(JSON.parse(line)) } }), lines }
}

/** startServer with a quiet logger unless a test brings its own. */
async function startServer (t: Parameters<typeof startSiteServer>[0], opts: Parameters<typeof startSiteServer>[1] = {}): Promise<TestServer> {
  return await startSiteServer(t, { logger: pino({ level: 'silent' }), ...opts })
}

const pairOf = (res: Response): string => (res.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
const entriesWith = async (s: TestServer, cookie: string): Promise<number> => (await s.request(ENTRIES, { headers: { cookie } })).status

t.test('login with the right password: 200, identity, a fresh 12-hour HttpOnly cookie', async t => {
  const s = await startServer(t)
  const before = Date.now()
  const res = await login(s, TEST_PASSWORD)
  t.equal(res.status, 200)
  const body = await res.json()
  t.equal(body.ok, true)
  t.match(body.identity.id, /^[A-Za-z0-9_-]{1,64}$/)
  t.same(body.identity, { id: body.identity.id, name: 'Editor', roles: ['editor'] })
  const setCookie = res.headers.get('set-cookie') ?? ''
  t.match(setCookie, /^cms_session=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43};/)
  for (const attr of ['HttpOnly', 'SameSite=Lax', 'Path=/', 'Max-Age=43200']) t.ok(setCookie.split('; ').includes(attr), attr)
  t.notOk(/;\s*Secure/i.test(setCookie), 'no Secure over plain http')
  t.equal(res.headers.get('cache-control'), 'no-store')
  t.equal(res.headers.get('access-control-allow-credentials'), null)
  const payload = cookiePayload(pairOf(res))
  t.equal(payload.editor, true)
  t.equal(payload.editorId, body.identity.id, 'the cookie keys the same editor id')
  t.ok(payload.exp >= before + 12 * HOUR && payload.exp <= Date.now() + 12 * HOUR, 'exp is now + 12 h in ms')

  const cookie = pairOf(res)
  const session = await s.request(`${API}/auth/session`, { headers: { cookie } })
  t.same(await session.json(), { authenticated: true, identity: body.identity })
  t.equal(session.headers.get('cache-control'), 'no-store')
  t.equal(await entriesWith(s, cookie), 200)

  const again = await login(s, TEST_PASSWORD, { cookie })
  const second = (await again.json()).identity
  t.not(second.id, body.identity.id, 'every login issues a new editor id')
  t.ok(cookiePayload(pairOf(again)).exp >= payload.exp, 'a new cookie, not the old one extended')
  t.equal(cookiePayload(pairOf(again)).editorId, second.id)
})

t.test('session route and API without a cookie', async t => {
  const s = await startServer(t)
  const res = await s.request(`${API}/auth/session`)
  t.equal(res.status, 200)
  t.same(await res.json(), { authenticated: false, identity: null })
  const entries = await s.request(ENTRIES)
  t.equal(entries.status, 401)
  t.type((await entries.json()).error, 'string')
  t.equal(entries.headers.get('cache-control'), 'no-store')
})

t.test('wrong, missing and wrongly typed passwords', async t => {
  const s = await startServer(t)
  const wrong = await login(s, 'not the password')
  t.equal(wrong.status, 401)
  t.type((await wrong.json()).error, 'string')
  t.equal(wrong.headers.get('set-cookie'), null)
  t.equal((await login(s, TEST_PASSWORD + ' ')).status, 401, 'no trimming or prefix match')
  t.equal((await login(s, TEST_PASSWORD.slice(0, -1))).status, 401)
  for (const bad of [undefined, null, 42, ['x'], { p: 1 }, '']) {
    const res = await login(s, bad)
    t.equal(res.status, 400, JSON.stringify(bad))
    t.type((await res.json()).error, 'string')
  }
  const noBody = await s.request(`${API}/auth/login`, { method: 'POST' })
  t.equal(noBody.status, 400)
  const form = await s.request(`${API}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `password=${encodeURIComponent(TEST_PASSWORD)}` })
  t.equal(form.status, 415)
  const malformed = await s.request(`${API}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"password":' })
  t.equal(malformed.status, 400)
  const json = { 'content-type': 'application/json' }
  for (const [body, status, why] of [
    [JSON.stringify({ password: TEST_PASSWORD, pad: 'x'.repeat(17 * 1024) }), 413, 'over 16 KB'],
    [`{"password":${JSON.stringify(TEST_PASSWORD)},"__proto__":{"admin":true}}`, 400, 'a __proto__ key'],
    [JSON.stringify([TEST_PASSWORD]), 400, 'an array'],
    ['"text"', 400, 'a string']
  ] as const) {
    const res = await s.request(`${API}/auth/login`, { method: 'POST', headers: json, body })
    t.equal(res.status, status, why)
    t.equal(res.headers.get('set-cookie'), null, `${why}: no session`)
  }
  const gzipped = await s.request(`${API}/auth/login`, { method: 'POST', headers: { ...json, 'content-encoding': 'gzip' }, body: gzipSync(JSON.stringify({ password: TEST_PASSWORD })) })
  t.equal(gzipped.status, 415, 'an encoded body')
  // Three failures so far (malformed requests are not counted): a fourth is still a plain 401.
  t.equal((await login(s, 'nope')).status, 401)
  t.equal((await login(s, TEST_PASSWORD)).status, 200, 'a success is still possible after 4 failures')
})

t.test('rate limit: 5 failures, then 429 with Retry-After for every attempt, a correct one too', async t => {
  const s = await startServer(t)
  for (let i = 0; i < 5; i++) {
    // A spoofed X-Forwarded-For without CMS_TRUST_PROXY must not give each attempt its own key.
    t.equal((await login(s, `wrong-${i}`, { 'x-forwarded-for': `203.0.113.${i}` })).status, 401, `failure ${i + 1}`)
  }
  const limited = await login(s, 'wrong again', { 'x-forwarded-for': '198.51.100.7' })
  t.equal(limited.status, 429)
  const retryAfter = Number(limited.headers.get('retry-after'))
  t.ok(Number.isInteger(retryAfter) && retryAfter > 0 && retryAfter <= 900, `Retry-After ${retryAfter}`)
  t.type((await limited.json()).error, 'string')
  const correct = await login(s, TEST_PASSWORD)
  t.equal(correct.status, 429, 'the correct password is refused too while limited')
  t.equal(correct.headers.get('set-cookie'), null)
  t.ok(Number(correct.headers.get('retry-after')) > 0)
  // The limit is per instance: a second server on another repository is not affected.
  const other = await startServer(t)
  t.equal((await login(other, TEST_PASSWORD)).status, 200)
})

t.test('with CMS_TRUST_PROXY=true the last X-Forwarded-For hop is the key', async t => {
  const s = await startServer(t, { env: { CMS_TRUST_PROXY: 'true' } })
  for (let i = 0; i < 5; i++) t.equal((await login(s, 'wrong', { 'x-forwarded-for': `203.0.113.${i}, 192.0.2.10` })).status, 401)
  const sameHop = await login(s, TEST_PASSWORD, { 'x-forwarded-for': '198.51.100.1, 192.0.2.10' })
  t.equal(sameHop.status, 429, 'changing the client-supplied hops does not escape the limit')
  t.ok(Number(sameHop.headers.get('retry-after')) > 0)
  t.equal((await login(s, TEST_PASSWORD, { 'x-forwarded-for': '192.0.2.10, 192.0.2.11' })).status, 200, 'another last hop is another client')
  t.equal((await login(s, TEST_PASSWORD)).status, 200, 'without the header the socket address is the key')
})

t.test('broken, forged and expired cookies are 401; a correctly signed one is accepted', async t => {
  const s = await startServer(t)
  const real = await s.login()
  const [payload = '', sig = ''] = real.replace('cms_session=', '').split('.')
  const flip = (x: string, i: number): string => x.slice(0, i) + (x[i] === 'A' ? 'B' : 'A') + x.slice(i + 1)
  const exp = Date.now() + HOUR
  const cases: Record<string, string> = {
    'tampered payload': `cms_session=${flip(payload, 4)}.${sig}`,
    'tampered signature': `cms_session=${payload}.${flip(sig, 10)}`,
    'empty signature': `cms_session=${payload}.`,
    'no signature': `cms_session=${payload}`,
    'garbage signature': `cms_session=${payload}.%%%***`,
    'empty value': 'cms_session=',
    malformed: 'cms_session=not-a-cookie',
    'payload not JSON': signCookie(TEST_SECRET, 'hello'),
    expired: signCookie(TEST_SECRET, { editor: true, editorId: 'abc', exp: Date.now() - 1000 }),
    'exp as a string': signCookie(TEST_SECRET, { editor: true, editorId: 'abc', exp: String(exp) }),
    'editor false': signCookie(TEST_SECRET, { editor: false, editorId: 'abc', exp }),
    'editorId with a slash': signCookie(TEST_SECRET, { editor: true, editorId: '../../heads/main', exp }),
    'editorId too long': signCookie(TEST_SECRET, { editor: true, editorId: 'a'.repeat(65), exp }),
    'editorId empty': signCookie(TEST_SECRET, { editor: true, editorId: '', exp }),
    'signed with another secret': signCookie('some-other-secret-0123456789-abcdefg', { editor: true, editorId: 'abc', exp }),
    'signed with the password': signCookie(TEST_PASSWORD, { editor: true, editorId: 'abc', exp })
  }
  for (const [name, cookie] of Object.entries(cases)) {
    const res = await s.request(ENTRIES, { headers: { cookie } })
    t.equal(res.status, 401, name)
    t.type((await res.json()).error, 'string')
    t.same(await (await s.request(`${API}/auth/session`, { headers: { cookie } })).json(), { authenticated: false, identity: null }, `${name}: session`)
  }
  t.equal(await entriesWith(s, real), 200, 'control: the real cookie works')
  t.equal(await entriesWith(s, signCookie(TEST_SECRET, { editor: true, editorId: boundEditorId(TEST_SECRET, TEST_PASSWORD), exp })), 200, 'control: the wire format is the spec\'s')
  t.equal(await entriesWith(s, signCookie(TEST_SECRET, { editor: true, editorId: 'forged-but-unbound', exp })), 401, 'an editorId not made under this password is refused (CONTRACT 17)')
})

t.test('logout revokes the session, also across a restart', async t => {
  const repoDir = await makeSite(t)
  const s = await startServer(t, { repoDir })
  const cookie = await s.login()
  const other = await s.login()
  const { editorId, exp } = cookiePayload(cookie)
  const out = await s.request(`${API}/auth/logout`, { method: 'POST', headers: { cookie } })
  t.equal(out.status, 200, 'no request-forgery header needed')
  t.same(await out.json(), { ok: true })
  const cleared = out.headers.get('set-cookie') ?? ''
  t.match(cleared, /^cms_session=;/)
  t.ok(cleared.split('; ').includes('Max-Age=0'))
  t.equal(await entriesWith(s, cookie), 401, 'the replayed cookie is refused')
  t.same(await (await s.request(`${API}/auth/session`, { headers: { cookie } })).json(), { authenticated: false, identity: null })
  t.equal(await entriesWith(s, other), 200, 'another session is untouched')
  const file = path.join(repoDir, '.git', 'cms', 'revoked-sessions.json')
  t.same(JSON.parse(await readFile(file, 'utf8')), { [editorId]: exp })

  await s.close()
  const restarted = await startServer(t, { repoDir })
  t.equal(await entriesWith(restarted, cookie), 401, 'still refused after a restart')
  t.equal(await entriesWith(restarted, other), 200)
  const anon = await restarted.request(`${API}/auth/logout`, { method: 'POST' })
  t.same(await anon.json(), { ok: true }, 'logout without a cookie is fine')
  const junk = await restarted.request(`${API}/auth/logout`, { method: 'POST', headers: { cookie: 'cms_session=junk.junk', 'content-type': 'text/plain' }, body: 'x' })
  t.equal(junk.status, 200)
  t.same(JSON.parse(await readFile(file, 'utf8')), { [editorId]: exp }, 'nothing new revoked')
})

t.test('the Secure flag follows X-Forwarded-Proto only under CMS_TRUST_PROXY', async t => {
  const plain = await startServer(t)
  const spoofed = await login(plain, TEST_PASSWORD, { 'x-forwarded-proto': 'https' })
  t.equal(spoofed.status, 200)
  t.notOk(/;\s*Secure/i.test(spoofed.headers.get('set-cookie') ?? ''), 'a client cannot claim HTTPS')
  const proxied = await startServer(t, { env: { CMS_TRUST_PROXY: 'true' } })
  const https = await login(proxied, TEST_PASSWORD, { 'x-forwarded-proto': 'https' })
  t.ok((https.headers.get('set-cookie') ?? '').split('; ').includes('Secure'))
  const cookie = pairOf(https)
  const out = await proxied.request(`${API}/auth/logout`, { method: 'POST', headers: { cookie, 'x-forwarded-proto': 'https' } })
  t.ok((out.headers.get('set-cookie') ?? '').split('; ').includes('Secure'), 'the clearing cookie matches')
  const http = await login(proxied, TEST_PASSWORD, { 'x-forwarded-proto': 'http' })
  t.notOk(/;\s*Secure/i.test(http.headers.get('set-cookie') ?? ''))
})

t.test('no password configured: login refuses clearly, nobody is signed in', async t => {
  const s = await startServer(t, { env: { CMS_EDIT_PASSWORD: '', EDIT_PASSWORD: '' } })
  const res = await login(s, TEST_PASSWORD)
  t.equal(res.status, 503)
  t.match((await res.json()).error, /CMS_EDIT_PASSWORD/)
  t.equal(res.headers.get('set-cookie'), null)
  t.equal(await entriesWith(s, signCookie(TEST_SECRET, { editor: true, editorId: 'abc', exp: Date.now() + HOUR })), 401)
})

t.test('EDIT_PASSWORD is the fallback password variable', async t => {
  const s = await startServer(t, { env: { CMS_EDIT_PASSWORD: '', EDIT_PASSWORD: 'legacy-password' } })
  t.equal((await login(s, 'legacy-password')).status, 200)
  t.equal((await login(s, TEST_PASSWORD)).status, 401)
})

/** An adapter that trusts a test header, the way a site's cms.config.mjs would wire its provider. */
function headerAdapter (extra: Partial<AuthAdapter> = {}): AuthAdapter {
  return {
    authenticate: (req: IncomingMessage): Identity | null => {
      const user = req.headers['x-test-user']
      if (user === 'explode') throw new Error('provider is down')
      if (user === 'weird') return { id: 'ok', name: 7, roles: [] } as unknown as Identity
      if (typeof user !== 'string') return null
      return { id: user, name: `User ${user}`, roles: String(req.headers['x-test-roles'] ?? '').split(',').filter(Boolean) }
    },
    loginUrl: ({ redirectTo }) => `https://idp.example/login?rd=${encodeURIComponent(redirectTo)}`,
    logoutUrl: ({ redirectTo }) => `https://idp.example/logout?rd=${encodeURIComponent(redirectTo)}`,
    ...extra
  }
}

t.test('provider adapter: authoritative, fails closed, logout redirects', async t => {
  const { logger, lines } = memoryLogger()
  const s = await startServer(t, { config: { auth: headerAdapter() }, logger })
  t.equal(s.services.auth.mode, 'provider')
  t.equal(s.services.auth.loginUrl('/admin/cms'), 'https://idp.example/login?rd=%2Fadmin%2Fcms')
  const refused = await login(s, TEST_PASSWORD)
  t.equal(refused.status, 409, 'no password fallback')
  t.type((await refused.json()).error, 'string')
  t.equal(refused.headers.get('set-cookie'), null)
  t.equal((await s.request(`${API}/auth/login`, { method: 'POST' })).status, 409, 'even without a body')

  const alice = { 'x-test-user': 'alice' }
  t.same(await (await s.request(`${API}/auth/session`, { headers: alice })).json(), { authenticated: true, identity: { id: 'alice', name: 'User alice', roles: [] } })
  t.equal((await s.request(ENTRIES, { headers: alice })).status, 200)
  t.same(await (await s.request(`${API}/auth/session`)).json(), { authenticated: false, identity: null })
  for (const user of ['alice@example.com', '../x', 'a'.repeat(65), 'explode', 'weird']) {
    const res = await s.request(ENTRIES, { headers: { 'x-test-user': user } })
    t.equal(res.status, 401, user)
    t.same(await (await s.request(`${API}/auth/session`, { headers: { 'x-test-user': user } })).json(), { authenticated: false, identity: null }, `${user}: session`)
  }
  const denials = lines.map(l => l.msg)
  t.ok(denials.includes('auth adapter authenticate threw; access denied'), 'a throwing adapter is logged')
  t.ok(denials.includes('auth adapter returned an invalid identity; access denied'), 'an unsafe identity is logged')
  t.notOk(JSON.stringify(lines).includes('alice@example.com'), 'the refused id itself is not logged')
  const forged = signCookie(TEST_SECRET, { editor: true, editorId: 'abc', exp: Date.now() + HOUR })
  t.equal((await s.request(ENTRIES, { headers: { cookie: forged } })).status, 401, 'password cookies mean nothing in provider mode')

  const out = await s.request(`${API}/auth/logout?redirectTo=${encodeURIComponent('/blog/post')}`, { method: 'POST', headers: alice })
  t.same(await out.json(), { ok: true, redirect: 'https://idp.example/logout?rd=%2Fblog%2Fpost' })
  const evil = await s.request(`${API}/auth/logout?redirectTo=${encodeURIComponent('https://evil.example/')}`, { method: 'POST' })
  t.same(await evil.json(), { ok: true, redirect: 'https://idp.example/logout?rd=%2F' }, 'foreign return targets are replaced by /')
})

t.test('trusted-header provider with declarative permissions', async t => {
  const config: ConfigInput = {
    auth: { provider: 'trusted-header', idHeader: 'X-Auth-User', nameHeader: 'X-Auth-Name', rolesHeader: 'X-Auth-Roles', logoutUrl: 'https://sso.example/out?back={redirectTo}' },
    permissions: { writer: ['edit'], chief: ['*'] }
  }
  const s = await startServer(t, { config })
  const headers = (user: string, roles: string): Record<string, string> => ({ 'x-auth-user': user, 'x-auth-name': 'Ada L.', 'x-auth-roles': roles })
  t.same(await (await s.request(`${API}/auth/session`, { headers: headers('ada', 'writer, reviewer') })).json(),
    { authenticated: true, identity: { id: 'ada', name: 'Ada L.', roles: ['writer', 'reviewer'] } })
  t.equal((await s.request(ENTRIES, { headers: headers('ada@example.com', 'chief') })).status, 401, 'unsafe id')
  t.equal((await s.request(ENTRIES)).status, 401, 'no header')
  t.equal((await login(s, TEST_PASSWORD)).status, 409)
  t.equal(s.services.auth.loginUrl('/x'), null, 'no login URL configured')
  const out = await s.request(`${API}/auth/logout`, { method: 'POST' })
  t.same(await out.json(), { ok: true, redirect: 'https://sso.example/out?back=%2F' })

  const auth = s.services.auth.authorizer
  t.equal(auth.active, true)
  t.equal(await auth.can({ id: 'ada', name: 'A', roles: ['writer'] }, 'edit', { collection: 'posts' }), true)
  t.equal(await auth.can({ id: 'ada', name: 'A', roles: ['writer'] }, 'publish'), false)
  t.equal(await auth.can({ id: 'bo', name: 'B', roles: ['chief'] }, 'manage_collections'), true)

  const before = await repoFingerprint(s.repoDir)
  const denied = await s.request(`${API}/mutate`, {
    method: 'POST',
    headers: { ...headers('ada', 'reviewer'), 'content-type': 'application/json', 'x-cms-request': '1' },
    body: JSON.stringify({ type: 'save_field', collection: 'posts', id: 'hello-world', field: 'title', value: 'Changed' })
  })
  t.equal(denied.status, 403)
  t.type((await denied.json()).error, 'string')
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing written')
})

t.test('check order: 401, then CSRF 403, then 400, then permission 403', async t => {
  const decisions: string[] = []
  const s = await startServer(t, {
    config: {
      auth: headerAdapter({
        authorize: ({ identity, action, collection }) => {
          decisions.push(`${identity.id}:${action}:${collection ?? ''}`)
          return identity.roles.includes('editor')
        }
      })
    }
  })
  const valid = JSON.stringify({ type: 'save_field', collection: 'posts', id: 'hello-world', field: 'title', value: 'Changed' })
  const invalid = JSON.stringify({ type: 'save_field', collection: 'posts' })
  const send = async (headers: Record<string, string>, body: string): Promise<Response> =>
    await s.request(`${API}/mutate`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
  const before = await repoFingerprint(s.repoDir)

  const unauth = await send({}, 'not json at all')
  t.equal(unauth.status, 401, 'no identity, no CSRF header, bad body: 401 first')
  const reader = { 'x-test-user': 'rita', 'x-test-roles': 'reader' }
  const noCsrf = await send(reader, 'not json at all')
  t.equal(noCsrf.status, 403)
  const csrfBody = await noCsrf.json()
  t.equal(csrfBody.error, 'Missing required request header')
  t.match(csrfBody.detail, /x-cms-request: 1/)
  const badBody = await send({ ...reader, 'x-cms-request': '1' }, invalid)
  t.equal(badBody.status, 400, 'payload checked before permission')
  t.equal(decisions.length, 0, 'authorize not asked yet')
  const forbidden = await send({ ...reader, 'x-cms-request': '1' }, valid)
  t.equal(forbidden.status, 403)
  const fb = await forbidden.json()
  t.type(fb.error, 'string')
  t.not(fb.error, 'Missing required request header')
  t.ok(decisions.includes('rita:edit:posts'), 'authorize got identity, action and collection')
  t.equal(await repoFingerprint(s.repoDir), before, 'refused requests changed nothing')
  t.equal(forbidden.headers.get('access-control-allow-credentials'), null)

  const allowed = await send({ 'x-test-user': 'ed', 'x-test-roles': 'editor', 'x-cms-request': '1', origin: 'https://elsewhere.example' }, valid)
  t.equal(allowed.status, 200, 'control: an editor may edit')
  t.equal(allowed.headers.get('access-control-allow-credentials'), null)
  t.equal(allowed.headers.get('cache-control'), 'no-store')

  const throwing = await startServer(t, { config: { auth: headerAdapter({ authorize: () => { throw new Error('policy bug') } }) } })
  const res = await throwing.request(`${API}/mutate`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-test-user': 'ed', 'x-cms-request': '1' }, body: valid })
  t.equal(res.status, 403, 'a throwing authorize denies')
})

t.test('the revocation file is only created by a logout', async t => {
  const s = await startServer(t)
  await s.login()
  await t.rejects(access(path.join(s.repoDir, '.git', 'cms', 'revoked-sessions.json')))
})
