import t from 'tap'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { git, makeSite, startServer, TEST_PASSWORD } from '../helpers/site.js'
import { API, remoteConfig, remoteFiles, SYNC_SECRET } from '../helpers/remote-site.js'
import { rateLimitKey } from '../../lib/auth/client-address.js'
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
