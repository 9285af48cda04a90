import t, { type Test } from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { git } from '../helpers/site.js'
import { startRemoteSite, devClone, hostRef } from '../helpers/remote-site.js'

t.test('publish pushes the commit of only the CMS paths, with the editor as author, then calls the webhook', async t => {
  // The webhook receiver notes what the git host has when it is called: the push came first.
  const seen: Array<{ body: { commit?: string }, hostHead: string }> = []
  let hostDir = ''
  const receiver = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => { body += c.toString() })
    req.on('end', () => { seen.push({ body: JSON.parse(body) as { commit?: string }, hostHead: git(hostDir, 'rev-parse', 'main') }); res.end('ok') })
  })
  await new Promise<void>(resolve => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { receiver.close() })
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
  const { s, host, as } = await startRemoteSite(t, { config: { delivery: { publish: { webhookUrl: hook } } } })
  hostDir = host.bareDir
  // A file outside the CMS paths, changed on the server: never committed, never pushed.
  await import('node:fs/promises').then(async fs => await fs.writeFile(`${s.repoDir}/src/layout.html`, '<main>local</main>\n'))
  const ann = as('ann', 'Ann Editor')
  t.equal((await ann.post('/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 1 })).status, 200)
  const res = await ann.post('/publish')
  t.equal(res.status, 200)
  const body = await res.json() as { push: { ok: boolean, commit: string }, commit: string, rebuild: { ok: boolean } }
  t.equal(body.push.ok, true, 'pushed')
  t.equal(body.push.commit, body.commit)
  t.equal(hostRef(host, 'refs/heads/main'), body.commit, 'the host has the publish commit')
  t.equal(git(host.bareDir, 'show', '--name-only', '--format=%an <%ae>', body.commit).split('\n').filter(Boolean).join('|'), 'Ann Editor <ann@users.git-cms.invalid>|content/notes/a.json')
  t.equal(git(s.repoDir, 'status', '--porcelain'), 'M src/layout.html', 'the local change outside the CMS paths stays uncommitted')
  t.same(seen.map(x => x.body.commit), [body.commit], 'one webhook call with the pushed commit')
  t.equal(seen[0]!.hostHead, body.commit, 'the host had the commit when the webhook was called')
  t.equal(body.rebuild.ok, true)
  t.match(await (await ann.get('/draft')).json(), { retryPush: { available: false } })
  const deployment = await (await ann.get('/deployment')).json() as { sync: { state: string, lastPush: { commit: string } } }
  t.equal(deployment.sync.state, 'ok')
  t.equal(deployment.sync.lastPush.commit, body.commit)
  // History follows the branch push on the sync queue, right after the response.
  for (let i = 0; i < 200 && hostRef(host, 'refs/cms/history') === ''; i++) await new Promise(resolve => setTimeout(resolve, 50))
  t.equal(hostRef(host, 'refs/cms/history'), git(s.repoDir, 'rev-parse', 'refs/cms/history'), 'history travelled after the push')
})

t.test('a pre-receive hook refusing the push: push.ok false, the commit stays local, retryPush sends it once allowed', async t => {
  const { s, host, as } = await startRemoteSite(t)
  await host.hook('pre-receive', 'echo "protected branch: no pushes today" >&2\nexit 1')
  const before = hostRef(host, 'refs/heads/main')
  const ann = as('ann')
  await ann.post('/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 2 })
  const body = await (await ann.post('/publish')).json() as { push: { ok: boolean, error: string }, commit: string, rebuild: { triggered: boolean } }
  t.equal(body.push.ok, false)
  t.match(body.push.error, /pre-receive hook declined|protected branch/)
  t.equal(git(s.repoDir, 'rev-parse', 'HEAD'), body.commit, 'the commit stays local')
  t.equal(hostRef(host, 'refs/heads/main'), before, 'the host is unchanged')
  t.equal(body.rebuild.triggered, false, 'no rebuild of content the host does not have')
  t.match(await (await ann.get('/draft')).json(), { retryPush: { available: true } })
  const failed = await (await ann.post('/publish', { retryPush: true })).json() as { push: { ok: boolean }, published: unknown[] }
  t.equal(failed.push.ok, false, 'still refused while the hook refuses')
  t.same(failed.published, [])

  t.equal((await ann.post('/publish', { retryPush: 'yes' })).status, 400, 'retryPush must be a boolean')
  t.equal((await as('wes', 'Wes', 'writer').post('/publish', { retryPush: true })).status, 403, 'a writer may not push')
  t.equal(hostRef(host, 'refs/heads/main'), before, 'a refused request pushes nothing')
  await host.hook('pre-receive', null)
  const retried = await (await ann.post('/publish', { retryPush: true })).json() as { push: { ok: boolean, commit: string }, published: unknown[] }
  t.equal(retried.push.ok, true)
  t.equal(retried.push.commit, body.commit, 'the same commit, republishing nothing')
  t.same(retried.published, [])
  t.equal(hostRef(host, 'refs/heads/main'), body.commit)
  t.match(await (await ann.get('/draft')).json(), { retryPush: { available: false } })
  const again = await (await ann.post('/publish', { retryPush: true })).json() as { push?: unknown, retryPush: { available: boolean } }
  t.equal(again.push, undefined, 'nothing left to push')
  t.equal(again.retryPush.available, false)
})

t.test('the remote branch moved with unrelated changes: the publish is replayed onto it, history stays linear', async t => {
  const { s, host, as } = await startRemoteSite(t)
  const dev = await devClone(t, host)
  const ann = as('ann')
  // Refused first, so the developer's push lands between our commit and our (re)push.
  await host.hook('pre-receive', 'test -f "$GIT_DIR/refuse" && exit 1\nexit 0')
  await import('node:fs/promises').then(async fs => await fs.writeFile(`${host.bareDir}/refuse`, ''))
  await ann.post('/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 3 })
  const first = await (await ann.post('/publish')).json() as { push: { ok: boolean }, commit: string }
  t.equal(first.push.ok, false)
  await import('node:fs/promises').then(async fs => await fs.rm(`${host.bareDir}/refuse`))
  const devCommit = await dev.commitAndPush({ 'src/layout.html': '<main>dev</main>\n', 'content/notes/b.json': '{"n":9}\n' }, 'Developer: layout and note b')

  const retried = await (await ann.post('/publish', { retryPush: true })).json() as { push: { ok: boolean, commit: string } }
  t.equal(retried.push.ok, true)
  t.not(retried.push.commit, first.commit, 'replayed as a new commit')
  t.equal(hostRef(host, 'refs/heads/main'), retried.push.commit)
  t.equal(git(host.bareDir, 'rev-parse', `${retried.push.commit}^`), devCommit, 'linear: the publish sits on the developer commit')
  t.equal(git(host.bareDir, 'rev-list', '--merges', '--count', 'main'), '0', 'no merge commit')
  t.equal(git(host.bareDir, 'log', '-1', '--format=%an', retried.push.commit), 'ann')
  t.equal(git(host.bareDir, 'show', `main:content/notes/a.json`), '{"n":3}', 'our change (the file keeps its compact style)')
  t.equal(git(host.bareDir, 'show', `main:src/layout.html`), '<main>dev</main>', 'their change')
  t.equal(git(s.repoDir, 'rev-parse', 'HEAD'), retried.push.commit, 'the server is on the pushed commit')
  t.equal(git(s.repoDir, 'status', '--porcelain'), '', 'its working tree holds both')
  const b = await (await ann.get('/entries?collection=notes&id=b')).json() as { entries: Array<{ data: { n: number } }> }
  t.equal(b.entries[0]?.data.n, 9, 'the developer change is served')
})

t.test('the remote branch changed the same entry: push.ok false, nothing is merged', async t => {
  const { s, host, as } = await startRemoteSite(t)
  const dev = await devClone(t, host)
  const ann = as('ann')
  await import('node:fs/promises').then(async fs => await fs.writeFile(`${host.bareDir}/refuse`, ''))
  await host.hook('pre-receive', 'test -f "$GIT_DIR/refuse" && exit 1\nexit 0')
  await ann.post('/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 4 })
  const first = await (await ann.post('/publish')).json() as { commit: string }
  await import('node:fs/promises').then(async fs => await fs.rm(`${host.bareDir}/refuse`))
  const devCommit = await dev.commitAndPush({ 'content/notes/a.json': '{"n":100}\n' }, 'Developer: note a')
  const retried = await (await ann.post('/publish', { retryPush: true })).json() as { push: { ok: boolean, error: string } }
  t.equal(retried.push.ok, false)
  t.match(retried.push.error, /content\/notes\/a\.json/)
  t.equal(hostRef(host, 'refs/heads/main'), devCommit, 'the host keeps the developer commit')
  t.equal(git(s.repoDir, 'rev-parse', 'HEAD'), first.commit, 'the server keeps its commit')
})

t.test('an empty repository on the host: the first publish creates the branch', async t => {
  const { makeSite, startServer } = await import('../helpers/site.js')
  const { startGitHost } = await import('../helpers/git-http-server.js')
  const { remoteConfig, remoteFiles, API } = await import('../helpers/remote-site.js')
  const repoDir = await makeSite(t, remoteFiles, { fixtures: false })
  const host = await startGitHost(t)
  git(repoDir, 'remote', 'add', 'origin', host.url)
  const s = await startServer(t, { repoDir, config: remoteConfig, env: { CMS_GIT_ON_PUBLISH: 'true' } })
  const headers = { 'x-user': 'ann', 'x-user-name': 'Ann', 'x-user-roles': 'publisher', 'content-type': 'application/json', 'x-cms-request': '1' }
  await s.request(`${API}/mutate`, { method: 'POST', headers, body: JSON.stringify({ type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 1 }) })
  const body = await (await s.request(`${API}/publish`, { method: 'POST', headers, body: '{}' })).json() as { push: { ok: boolean, commit: string } }
  t.equal(body.push.ok, true)
  t.equal(hostRef(host, 'refs/heads/main'), body.push.commit, 'the branch exists on the host now')
})

/** A webhook receiver noting each call's body. */
async function webhookReceiver (t: Test): Promise<{ hook: string, seen: Array<{ commit?: string, published: Array<{ collection: string, id: string }> }> }> {
  const seen: Array<{ commit?: string, published: Array<{ collection: string, id: string }> }> = []
  const receiver = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => { body += c.toString() })
    req.on('end', () => { seen.push(JSON.parse(body) as typeof seen[number]); res.end('ok') })
  })
  await new Promise<void>(resolve => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { receiver.close() })
  return { hook: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, seen }
}

t.test('a publish finished from a retained recovery plan is committed, pushed and announced like any publish', async t => {
  const { hook, seen } = await webhookReceiver(t)
  const { s, host, as } = await startRemoteSite(t, { config: { delivery: { publish: { webhookUrl: hook } } } })
  // What a publish killed between its plan and its writes leaves behind.
  const plan = { version: 1, startedAt: Date.now(), editor: { id: 'ann', name: 'Ann Editor' }, items: [{ collection: 'notes', id: 'b', file: 'content/notes/b.json', text: '{"n":7}\n' }] }
  await import('node:fs/promises').then(async fs => await fs.writeFile(`${s.repoDir}/.git/cms/publish-plan.json`, JSON.stringify(plan)))
  t.equal((await as('ann').post('/publish')).status, 200)
  const head = git(s.repoDir, 'rev-parse', 'HEAD')
  t.equal(git(s.repoDir, 'show', '--name-only', '--format=%an', head).split('\n').filter(Boolean).join('|'), 'Ann Editor|content/notes/b.json')
  t.equal(hostRef(host, 'refs/heads/main'), head, 'the finished publish was pushed')
  t.match(seen, [{ commit: head, published: [{ collection: 'notes', id: 'b' }] }], 'the webhook announced it')
})

t.test('a recovery plan finished at start: the start sync pushes its commit and announces it', async t => {
  const { makeSite, startServer } = await import('../helpers/site.js')
  const { startGitHost } = await import('../helpers/git-http-server.js')
  const { remoteConfig, remoteFiles, gitAsync } = await import('../helpers/remote-site.js')
  const fs = await import('node:fs/promises')
  const { hook, seen } = await webhookReceiver(t)
  const repoDir = await makeSite(t, remoteFiles, { fixtures: false })
  const host = await startGitHost(t, repoDir)
  git(repoDir, 'remote', 'add', 'origin', host.url)
  await gitAsync(repoDir, 'fetch', '--quiet', 'origin')
  const plan = { version: 1, startedAt: Date.now(), editor: { id: 'ann', name: 'Ann Editor' }, items: [{ collection: 'notes', id: 'b', file: 'content/notes/b.json', text: '{"n":8}\n' }] }
  await fs.mkdir(`${repoDir}/.git/cms`, { recursive: true })
  await fs.writeFile(`${repoDir}/.git/cms/publish-plan.json`, JSON.stringify(plan))
  await startServer(t, { repoDir, config: { ...remoteConfig, delivery: { publish: { webhookUrl: hook } } }, env: { CMS_GIT_ON_PUBLISH: 'true' } })
  const head = git(repoDir, 'rev-parse', 'HEAD')
  t.equal(git(repoDir, 'show', '--name-only', '--format=%an', head).split('\n').filter(Boolean).join('|'), 'Ann Editor|content/notes/b.json')
  for (let i = 0; i < 600 && seen.length === 0; i++) await new Promise(resolve => setTimeout(resolve, 50))
  t.equal(hostRef(host, 'refs/heads/main'), head, 'the finished publish was pushed')
  t.match(seen, [{ commit: head, published: [{ collection: 'notes', id: 'b' }] }], 'the webhook announced it')
})
