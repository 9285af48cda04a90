import t from 'tap'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { git, makeSite, repoFingerprint, startServer, TEST_PASSWORD, writeHeaders } from '../helpers/site.js'
import { API, remoteConfig, remoteFiles, SYNC_SECRET } from '../helpers/remote-site.js'
import { rateLimitKey } from '../../lib/auth/password-auth.js'
import { initSite } from '../../lib/init/init-site.js'
import type { ConfigInput } from '../../lib/config.js'

t.test('a token in the remote URL\'s query never reaches GET /deployment nor the log', async t => {
  const token = 'qs-secret-token-0123456789'
  const repoDir = await makeSite(t, remoteFiles, { fixtures: false })
  // A port nothing listens on: every fetch fails, with git's message naming the URL.
  git(repoDir, 'remote', 'add', 'origin', `http://127.0.0.1:9/site.git?private_token=${token}`)
  const logs: string[] = []
  const logger = pino({ level: 'debug' }, new Writable({ write (c: Buffer, _e, done) { logs.push(c.toString()); done() } }))
  const s = await startServer(t, { repoDir, config: remoteConfig as ConfigInput, logger })
  const synced = await s.request(`${API}/sync`, { method: 'POST', headers: { 'x-gitlab-token': SYNC_SECRET }, body: '{}' })
  const syncBody = await synced.text()
  const deployment = await (await s.request(`${API}/deployment`, { headers: { 'x-user': 'ann', 'x-user-name': 'Ann', 'x-user-roles': 'publisher' } })).text()
  t.match(deployment, /lastFetchError/, 'the fetch failed and is reported')
  t.notMatch(deployment, token, 'not in GET /deployment')
  t.notMatch(syncBody, token, 'not in the sync answer')
  t.ok(logs.some(l => l.includes('fetch from the git remote failed')), 'the failure is logged')
  t.notMatch(logs.join(''), token, 'not in the log')
})

t.test('failed logins count by IPv6 /64', async t => {
  t.equal(rateLimitKey('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64')
  t.equal(rateLimitKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64')
  t.equal(rateLimitKey('::1'), '0:0:0:0::/64')
  t.equal(rateLimitKey('::ffff:10.0.0.1'), '10.0.0.1')
  t.equal(rateLimitKey('10.0.0.1'), '10.0.0.1')
  const s = await startServer(t, { env: { CMS_TRUST_PROXY: 'true' } })
  const login = async (from: string, password = 'wrong password'): Promise<number> => {
    const res = await s.request(`${API}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': from }, body: JSON.stringify({ password }) })
    await res.arrayBuffer()
    return res.status
  }
  for (let i = 1; i <= 5; i++) t.equal(await login(`2001:db8:1:2::${i}`), 401, `failure ${i}, each from another /128`)
  t.equal(await login('2001:db8:1:2:ffff::9', TEST_PASSWORD), 429, 'the /64 is limited, the right password too')
  t.equal(await login('2001:db8:1:3::1', TEST_PASSWORD), 200, 'the next /64 is not')
})

t.test('an id whose file the file system cannot hold is a 400 that leaves nothing behind', async t => {
  const s = await startServer(t, { config: { collections: { notes: { format: 'json', nested: true } } } as unknown as ConfigInput })
  const cookie = await s.login()
  const before = await repoFingerprint(s.repoDir)
  const put = async (id: string): Promise<Response> => await s.request(`${API}/mutate`, {
    method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'put_entry', collection: 'notes', id, data: { n: 1 } })
  })
  for (const [name, id] of [['a 252-byte segment', 'x'.repeat(252)], ['4 x 250 bytes', Array.from({ length: 4 }, (_, i) => String(i).repeat(250)).join('/')], ['multi-byte', 'é'.repeat(120)]] as const) {
    const res = await put(id)
    t.equal(res.status, 400, name)
    t.match(await res.json(), { code: 'bad_request', field: 'id', error: /file name longer than/ }, `${name}: the reason`)
  }
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing written')
  t.notOk(existsSync(path.join(s.repoDir, 'content/notes', '0'.repeat(250))), 'no empty folder')
  t.equal((await put('y'.repeat(200))).status, 200, 'a long name that fits is written')
})

t.test('GET /media/references and a refused delete never name another editor\'s draft', async t => {
  const config = {
    auth: { provider: 'trusted-header', idHeader: 'x-user', nameHeader: 'x-user-name', rolesHeader: 'x-user-roles' },
    permissions: { editor: ['*'] }
  } as unknown as ConfigInput
  const s = await startServer(t, { config })
  const as = (id: string) => ({ 'x-user': id, 'x-user-name': id, 'x-user-roles': 'editor' })
  const media = '/uploads/2026/01/maria-b917fe43.png'
  const saved = await s.request(`${API}/mutate`, {
    method: 'POST',
    headers: { ...as('alice'), 'content-type': 'application/json', 'x-cms-request': '1' },
    body: JSON.stringify({ type: 'save_field', collection: 'posts', id: 'hello-world', field: 'cover', value: media })
  })
  t.equal(saved.status, 200, 'Alice drafts a reference')
  const refsAs = async (id: string): Promise<string> => await (await s.request(`${API}/media/references?path=public${media}`, { headers: as(id) })).text()
  const alice = await refsAs('alice')
  t.ok((JSON.parse(alice) as { references: Array<Record<string, unknown>> }).references.some(r => r.id === 'hello-world' && r.draft === true && r.editor === 'alice'), 'Alice sees her own draft')
  const bob = await refsAs('bob')
  t.notMatch(bob, /alice|"draft"/, 'Bob sees neither Alice nor her draft')
  t.match(JSON.parse(bob), { otherDrafts: 1 }, 'only that a draft uses it')
  const refused = await s.request(`${API}/media?path=public${media}`, { method: 'DELETE', headers: { ...as('bob'), 'x-cms-request': '1' } })
  t.equal(refused.status, 409, 'still in use')
  t.notMatch(await refused.text(), /alice|"draft"/, 'the 409 names no other editor either')
})

t.test('git cms init never writes a config that serve refuses (a folder name holding a newline)', async t => {
  const repoDir = await makeSite(t, { 'content/posts/a.md': '---\ntitle: A\n---\nText\n', 'content/we\nird/b.md': '---\ntitle: B\n---\nText\n' }, { fixtures: false })
  const result = await initSite({ repoDir, force: true })
  t.ok(result.inferred.badNames.some(b => b.path.includes('we\nird')), 'the folder is reported')
  const s = await startServer(t, { repoDir })
  t.ok(s.cms.config.collections.posts, 'serve accepts the config and has the other collection')
})
