import t from 'tap'
import type { IncomingMessage } from 'node:http'
import { startServer, repoFingerprint, writeHeaders, git, type TestServer } from '../helpers/site.js'

const API = '/api/cms'

t.test('GET /history: 404 for an entry that never existed, 200 for a deleted one with history', async t => {
  const s = await startServer(t, { files: { 'content/notes/a.json': '{"n":0}\n' } })
  const cookie = await s.login()
  const history = async (c: string, id: string): Promise<Response> => await s.request(`${API}/history?collection=${c}&id=${id}`, { headers: { cookie } })
  const never = await history('notes', 'never-was')
  t.equal(never.status, 404)
  t.match(await never.json(), { code: 'not_found', error: String })
  const untouched = await history('notes', 'a')
  t.equal(untouched.status, 200, 'an existing entry without snapshots')
  t.same(await untouched.json(), { history: [] })
  const del = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'delete_entry', collection: 'notes', id: 'a' }) })
  t.equal(del.status, 200)
  const deleted = await history('notes', 'a')
  t.equal(deleted.status, 200, 'a deleted entry keeps its history')
  t.equal((await deleted.json() as { history: unknown[] }).history.length, 1)
})

/** Publishing is allowed for every entry except those of ids starting with `secret`. */
const config = {
  auth: {
    authenticate: (req: IncomingMessage) => {
      const id = req.headers['x-user']
      return typeof id === 'string' ? { id, name: id, roles: [String(req.headers['x-user-roles'] ?? '')] } : null
    },
    loginUrl: () => '/login',
    logoutUrl: () => '/logout',
    authorize: ({ identity, action, id }: { identity: { roles: string[] }, action: string, id?: string }) =>
      action !== 'publish' || (identity.roles.includes('publisher') && !(id ?? '').startsWith('secret'))
  },
  collections: { notes: { format: 'json' as const } }
}

function as (s: TestServer, user: string, roles: string) {
  const headers = { 'x-user': user, 'x-user-roles': roles, 'content-type': 'application/json', 'x-cms-request': '1' }
  return async (p: string, body: unknown): Promise<Response> => await s.request(API + p, { method: 'POST', headers, body: JSON.stringify(body) })
}

t.test('POST /publish: 403 and nothing published when the policy denies every entry in scope; mixed scope keeps per-entry failed', async t => {
  const s = await startServer(t, { config: config as never, files: { 'content/notes/a.json': '{"n":0}\n', 'content/notes/secret-b.json': '{"n":0}\n' } })
  const writer = as(s, 'wendy', 'writer')
  for (const id of ['a', 'secret-b']) {
    t.equal((await writer('/mutate', { type: 'save_field', collection: 'notes', id, field: 'n', value: 1 })).status, 200, `draft of ${id}`)
  }
  const before = await repoFingerprint(s.repoDir)
  const commits = git(s.repoDir, 'rev-list', '--all', '--count')
  const denied = await writer('/publish', {})
  t.equal(denied.status, 403)
  t.match(await denied.json(), { code: 'forbidden', error: String })
  const scoped = await writer('/publish', { collection: 'notes', id: 'a' })
  t.equal(scoped.status, 403, 'also for a one-entry scope')
  t.equal(await repoFingerprint(s.repoDir), before, 'no file or ref changed')
  t.equal(git(s.repoDir, 'rev-list', '--all', '--count'), commits, 'no commit')

  const publisher = as(s, 'pat', 'publisher')
  for (const id of ['a', 'secret-b']) {
    t.equal((await publisher('/mutate', { type: 'save_field', collection: 'notes', id, field: 'n', value: 2 })).status, 200)
  }
  const mixed = await publisher('/publish', {})
  t.equal(mixed.status, 200)
  t.match(await mixed.json(), { published: [{ collection: 'notes', id: 'a' }], failed: [{ collection: 'notes', id: 'secret-b', error: String }] })
})
