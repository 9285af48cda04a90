import t from 'tap'
import { signSession, verifySession, sessionCookieHeader, SESSION_TTL_MS } from '../../lib/auth/session-cookie.js'
import { signCookieValue } from '../helpers/auth.js'

const SECRET = 'unit-test-secret-0123456789abcdefghijkl'
const NOW = 1_800_000_000_000
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

t.test('a signed session verifies and carries its claims', async t => {
  const value = signSession(SECRET, { editorId: 'abc_DEF-123', exp: NOW + 1000 })
  t.match(value, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/)
  t.same(verifySession(SECRET, value, NOW), { editorId: 'abc_DEF-123', exp: NOW + 1000 })
  // The wire format is independent of our code: the helper signs the same bytes.
  t.equal(value, signCookieValue(SECRET, { editor: true, editorId: 'abc_DEF-123', exp: NOW + 1000 }))
  const payload = JSON.parse(Buffer.from(value.split('.')[0] ?? '', 'base64url').toString())
  t.same(payload, { editor: true, editorId: 'abc_DEF-123', exp: NOW + 1000 })
})

t.test('expiry: valid until exp, refused at and after it', async t => {
  const value = signSession(SECRET, { editorId: 'e1', exp: NOW + SESSION_TTL_MS })
  t.ok(verifySession(SECRET, value, NOW + SESSION_TTL_MS - 1))
  t.equal(verifySession(SECRET, value, NOW + SESSION_TTL_MS), null)
  t.equal(verifySession(SECRET, value, NOW + SESSION_TTL_MS + 1), null)
  t.equal(SESSION_TTL_MS, 12 * 60 * 60 * 1000)
})

t.test('every broken cookie is refused without throwing', async t => {
  const good = signSession(SECRET, { editorId: 'e1', exp: NOW + 1000 })
  t.ok(verifySession(SECRET, good, NOW), 'control: the good cookie passes')
  const [payload = '', sig = ''] = good.split('.')
  const flip = (s: string, i: number): string => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1)
  const cases: Record<string, string> = {
    empty: '',
    'no dot': payload + sig,
    'empty signature': `${payload}.`,
    'empty payload': `.${sig}`,
    'two dots': `${payload}.${sig}.x`,
    'tampered payload': `${flip(payload, 3)}.${sig}`,
    'tampered signature': `${payload}.${flip(sig, 5)}`,
    'signature with bad characters': `${payload}.${sig.slice(0, -2)}+/`,
    'signature with padding': `${payload}.${sig}=`,
    'short signature': `${payload}.${sig.slice(0, 20)}`,
    'long signature': `${payload}.${sig}AAAA`,
    'non-canonical spelling': `${payload}.${sig.slice(0, -1)}${B64[(B64.indexOf(sig.slice(-1)) ^ 1)] ?? ''}`,
    'other secret': signCookieValue('another-secret', { editor: true, editorId: 'e1', exp: NOW + 1000 }),
    huge: `${'A'.repeat(5000)}.${sig}`
  }
  for (const [name, value] of Object.entries(cases)) t.equal(verifySession(SECRET, value, NOW), null, name)
  // The non-canonical spelling decodes to the very same bytes: only the canonical check refuses it.
  t.same(Buffer.from(cases['non-canonical spelling']?.split('.')[1] ?? '', 'base64url'), Buffer.from(sig, 'base64url'))
})

t.test('validly signed but malformed payloads are refused', async t => {
  const exp = NOW + 1000
  const payloads: Record<string, unknown> = {
    'not JSON': 'not json{',
    'JSON null': null,
    'editor false': { editor: false, editorId: 'e1', exp },
    'editor missing': { editorId: 'e1', exp },
    'editor "true"': { editor: 'true', editorId: 'e1', exp },
    'exp string': { editor: true, editorId: 'e1', exp: String(exp) },
    'exp missing': { editor: true, editorId: 'e1' },
    'editorId missing': { editor: true, exp },
    'editorId empty': { editor: true, editorId: '', exp },
    'editorId with slash': { editor: true, editorId: '../x', exp },
    'editorId with dot': { editor: true, editorId: 'a.b', exp },
    'editorId too long': { editor: true, editorId: 'a'.repeat(65), exp },
    'editorId number': { editor: true, editorId: 12, exp }
  }
  for (const [name, payload] of Object.entries(payloads)) {
    t.equal(verifySession(SECRET, signCookieValue(SECRET, payload === null ? 'null' : payload), NOW), null, name)
  }
  t.ok(verifySession(SECRET, signCookieValue(SECRET, { editor: true, editorId: 'a'.repeat(64), exp }), NOW), 'control: 64 chars is fine')
})

t.test('Set-Cookie attributes', async t => {
  t.equal(sessionCookieHeader('v.s', false), 'cms_session=v.s; Max-Age=43200; Path=/; HttpOnly; SameSite=Lax')
  t.equal(sessionCookieHeader('v.s', true), 'cms_session=v.s; Max-Age=43200; Path=/; HttpOnly; SameSite=Lax; Secure')
  t.equal(sessionCookieHeader(null, false), 'cms_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax')
  t.equal(sessionCookieHeader(null, true), 'cms_session=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax; Secure')
})
