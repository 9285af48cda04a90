import t from 'tap'
import { createHmac } from 'node:crypto'
import { git, repoFingerprint } from '../helpers/site.js'
import { startRemoteSite, devClone, hostRef, API, SYNC_SECRET, gitAsync } from '../helpers/remote-site.js'

const sign = (body: string, secret = SYNC_SECRET): string => 'sha256=' + createHmac('sha256', secret).update(body).digest('hex')

interface EntriesBody { entries: Array<{ id: string, revision: number, data: { n: number } }> }

t.test("a developer's push reaches the editors: new revision, stale save is 409, old draft publishes as stale_entry", async t => {
  const { s, host, as } = await startRemoteSite(t)
  const dev = await devClone(t, host)
  const ann = as('ann')
  const bob = as('bob')
  const before = (await (await ann.get('/entries?collection=notes&id=a')).json() as EntriesBody).entries[0]!
  // Bob drafts on the old base before the developer's push.
  t.equal((await bob.post('/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 5, expectedRevision: before.revision })).status, 200)
  const devCommit = await dev.commitAndPush({ 'content/notes/a.json': '{"n":42}\n', 'src/layout.html': '<main>v2</main>\n' }, 'Developer: note a')

  const payload = JSON.stringify({ ref: 'refs/heads/main', after: devCommit })
  const res = await s.request(`${API}/sync`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': sign(payload) }, body: payload })
  t.equal(res.status, 200)
  const synced = await res.json() as { sync: { state: string, upstreamCommit: string } }
  t.equal(synced.sync.state, 'ok')
  t.equal(git(s.repoDir, 'rev-parse', 'HEAD'), devCommit, 'fast-forwarded')

  const after = (await (await ann.get('/entries?collection=notes&id=a')).json() as EntriesBody).entries[0]!
  t.equal(after.data.n, 42, 'the upstream content is served')
  t.ok(after.revision > before.revision, `new revision ${after.revision} > ${before.revision}`)
  const listed = (await (await ann.get('/entries?collection=notes')).json() as EntriesBody).entries.find(e => e.id === 'a')!
  t.equal(listed.revision, after.revision, 'the list shows it too')
  const stale = await ann.post('/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 6, expectedRevision: before.revision })
  t.equal(stale.status, 409, 'a save with the old expectedRevision is a conflict')
  const published = await (await bob.post('/publish')).json() as { published: unknown[], conflicts: Array<{ id: string, code: string }> }
  t.same(published.published, [])
  t.match(published.conflicts, [{ id: 'a', code: 'stale_entry' }], 'the draft made on the old base is stale')
  t.equal(hostRef(host, 'refs/heads/main'), devCommit)
})

t.test('POST /sync without a valid signature is refused and changes nothing; GitLab token accepted', async t => {
  const { s, host } = await startRemoteSite(t)
  const dev = await devClone(t, host)
  await dev.commitAndPush({ 'content/notes/b.json': '{"n":7}\n' }, 'Developer: note b')
  const print = await repoFingerprint(s.repoDir)
  const body = '{"ref":"refs/heads/main"}'
  const post = async (headers: Record<string, string>, b = body): Promise<Response> => await s.request(`${API}/sync`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: b })
  t.equal((await post({})).status, 401, 'no signature')
  t.equal((await post({ 'x-hub-signature-256': sign(body, 'another-secret-0123456789') })).status, 403, 'wrong secret')
  t.equal((await post({ 'x-hub-signature-256': sign(body) }, body + ' ')).status, 403, 'body changed after signing')
  t.equal((await post({ 'x-hub-signature-256': 'sha256=' })).status, 403, 'empty digest')
  t.equal((await post({ 'x-gitlab-token': 'nope' })).status, 403, 'wrong GitLab token')
  t.equal((await s.request(`${API}/sync`, { method: 'POST', headers: { 'x-hub-signature-256': sign('x') }, body: 'x'.repeat(2 * 1024 * 1024) })).status, 413, 'oversized body')
  t.equal(await repoFingerprint(s.repoDir), print, 'nothing changed')
  t.equal((await post({ 'x-gitlab-token': SYNC_SECRET })).status, 200, 'GitLab token')
  t.equal(git(s.repoDir, 'show', 'HEAD:content/notes/b.json'), '{"n":7}')
})

t.test('without git.syncSecret the sync route does not exist', async t => {
  const { s } = await startRemoteSite(t, { config: { git: { remote: 'origin', pullInterval: 0 } } })
  t.equal((await s.request(`${API}/sync`, { method: 'POST', body: '{}', headers: { 'x-gitlab-token': SYNC_SECRET } })).status, 404)
})

t.test('a force push upstream is never merged silently', async t => {
  const { s, host, as } = await startRemoteSite(t)
  const dev = await devClone(t, host)
  const ann = as('ann')
  const head = git(s.repoDir, 'rev-parse', 'HEAD')
  // The developer rewrites history: a new root-level amend, force-pushed.
  await gitAsync(dev.dir, 'commit', '--quiet', '--amend', '-m', 'rewritten site')
  await gitAsync(dev.dir, 'push', '--quiet', '--force', 'origin', 'HEAD:main')
  await dev.commitAndPush({ 'content/notes/a.json': '{"n":666}\n' }, 'on the rewritten history')
  const res = await s.request(`${API}/sync`, { method: 'POST', headers: { 'x-gitlab-token': SYNC_SECRET }, body: '{}' })
  t.equal(res.status, 200)
  t.equal(git(s.repoDir, 'rev-parse', 'HEAD'), head, 'HEAD did not move')
  const deployment = await (await ann.get('/deployment')).json() as { sync: { state: string, message: string } }
  t.equal(deployment.sync.state, 'diverged')
  t.match(deployment.sync.message, /force push/)
  const a = (await (await ann.get('/entries?collection=notes&id=a')).json() as EntriesBody).entries[0]!
  t.equal(a.data.n, 0, 'still serving our content')
  await ann.post('/mutate', { type: 'save_field', collection: 'notes', id: 'b', field: 'n', value: 1 })
  const published = await (await ann.post('/publish')).json() as { push: { ok: boolean, error: string }, commit: string }
  t.equal(published.push.ok, false, 'the publish is not pushed onto a rewritten branch')
  t.match(published.push.error, /force push/)
  t.not(hostRef(host, 'refs/heads/main'), published.commit)
  t.equal(git(host.bareDir, 'show', 'main:content/notes/a.json'), '{"n":666}', "the host's history is untouched")
})

t.test('a token in the remote URL never shows in a response or a log line', async t => {
  const { s, host, as, logs } = await startRemoteSite(t)
  const ann = as('ann')
  const bodies: string[] = []
  const keep = async (r: Response): Promise<string> => { const text = await r.text(); bodies.push(text); return text }
  // The hook prints the URL it was given, as some hosts echo it back.
  await host.hook('pre-receive', `echo "rejected for ${host.url}" >&2\nexit 1`)
  await ann.post('/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 1 })
  const refused = JSON.parse(await keep(await ann.post('/publish'))) as { push: { ok: boolean, error: string } }
  t.equal(refused.push.ok, false)
  t.match(refused.push.error, /\*\*\*/, 'the credentials were replaced')
  await keep(await ann.get('/draft'))
  await keep(await ann.get('/deployment'))
  // Now the host is gone: fetch and push fail with git's connection errors.
  await host.close()
  await keep(await s.request(`${API}/sync`, { method: 'POST', headers: { 'x-gitlab-token': SYNC_SECRET }, body: '{}' }))
  await keep(await ann.post('/publish', { retryPush: true }))
  const deployment = JSON.parse(await keep(await ann.get('/deployment'))) as { sync: { state: string, lastFetchError: string } }
  t.equal(deployment.sync.state, 'error')
  t.match(deployment.sync.lastFetchError, /127\.0\.0\.1/)
  const everything = bodies.join('\n') + logs.join('\n')
  t.ok(logs.length > 0, 'something was logged')
  t.notOk(everything.includes(host.token), 'the token appears nowhere')
  t.notOk(everything.includes(host.token.slice(4)), 'not even in part')
  t.notOk(everything.includes('cms-bot:'), 'nor the userinfo')
})

t.test('before a publish the service fetches: a draft on an entry changed upstream publishes as stale_entry', async t => {
  const { s, host, as } = await startRemoteSite(t)
  const dev = await devClone(t, host)
  const bob = as('bob')
  await bob.post('/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 5 })
  await bob.post('/mutate', { type: 'save_field', collection: 'notes', id: 'b', field: 'n', value: 6 })
  const devCommit = await dev.commitAndPush({ 'content/notes/a.json': '{"n":77}\n' }, 'Developer: note a')
  // No webhook, no interval: the publish itself fetches first.
  const published = await (await bob.post('/publish')).json() as { published: Array<{ id: string }>, conflicts: Array<{ id: string, code: string }>, push: { ok: boolean, commit: string } }
  t.same(published.published.map(p => p.id), ['b'])
  t.match(published.conflicts, [{ id: 'a', code: 'stale_entry' }])
  t.equal(published.push.ok, true)
  t.equal(git(host.bareDir, 'rev-parse', `${published.push.commit}^`), devCommit, 'published on top of the developer commit')
  t.equal(git(s.repoDir, 'show', 'HEAD:content/notes/a.json'), '{"n":77}', "the developer's note a stays")
})

t.test('the interval fetches by itself', async t => {
  const { s, host } = await startRemoteSite(t, { config: { git: { remote: 'origin', pullInterval: 1 } } })
  const dev = await devClone(t, host)
  const devCommit = await dev.commitAndPush({ 'content/notes/b.json': '{"n":8}\n' }, 'Developer: note b')
  const deadline = Date.now() + 30000
  while (Date.now() < deadline && git(s.repoDir, 'rev-parse', 'HEAD') !== devCommit) await new Promise(resolve => setTimeout(resolve, 100))
  t.equal(git(s.repoDir, 'rev-parse', 'HEAD'), devCommit, 'fast-forwarded without a webhook')
})
