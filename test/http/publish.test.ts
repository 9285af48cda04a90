import t, { type Test } from 'tap'
import { readFile, writeFile, chmod, rm, readdir } from 'node:fs/promises'
import { createServer, type IncomingMessage } from 'node:http'
import { createHmac } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { startServer, repoFingerprint, git, type TestServer } from '../helpers/site.js'

const API = '/api/cms'
const baseConfig = {
  auth: { provider: 'trusted-header' as const, idHeader: 'x-user', nameHeader: 'x-user-name', rolesHeader: 'x-user-roles' },
  permissions: { writer: ['edit' as const, 'upload' as const], publisher: ['*' as const] },
  collections: {
    posts: { format: 'md' as const, schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, body: { type: 'string' } } } },
    notes: { format: 'json' as const }
  }
}
const files = {
  'content/posts/hello.md': '---\ntitle: Hello\n---\nFirst body.\n',
  'content/notes/a.json': '{"n":0}\n',
  'content/notes/b.json': '{"n":0}\n',
  'README.md': '# site\n'
}

interface Editor { get: (p: string) => Promise<Response>, post: (p: string, body?: unknown) => Promise<Response>, del: (p: string) => Promise<Response> }

function editor (s: TestServer, id: string, name: string, roles: string): Editor {
  const headers = { 'x-user': id, 'x-user-name': name, 'x-user-roles': roles }
  return {
    get: async (p) => await s.request(API + p, { headers }),
    post: async (p, body) => await s.request(API + p, { method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'x-cms-request': '1' }, body: JSON.stringify(body ?? {}) }),
    del: async (p) => await s.request(API + p, { method: 'DELETE', headers: { ...headers, 'x-cms-request': '1' } })
  }
}

/** A real local HTTP receiver for the rebuild webhook. */
async function receiver (t: Test, behave: (req: IncomingMessage, body: string) => { status: number, delayMs?: number } = () => ({ status: 200 })) {
  const calls: Array<{ method: string, headers: IncomingMessage['headers'], body: string }> = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => { body += c.toString('utf8') })
    req.on('end', () => {
      calls.push({ method: req.method ?? '', headers: req.headers, body })
      const { status, delayMs } = behave(req, body)
      setTimeout(() => { res.statusCode = status; res.end('ok') }, delayMs ?? 0)
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => { server.closeAllConnections(); await new Promise(resolve => server.close(resolve)) })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, calls }
}

const read = async (s: TestServer, rel: string): Promise<string> => await readFile(path.join(s.repoDir, rel), 'utf8')

t.test('under a policy edits are private drafts; publish writes base, commits exactly those paths and signs the webhook', async t => {
  const hook = await receiver(t)
  const config = { ...baseConfig, delivery: { publish: { webhookUrl: hook.url, secret: 'hook-secret', deploymentId: 'dep-1' } } }
  const s = await startServer(t, { config, files, env: { CMS_GIT_ON_PUBLISH: 'true' } })
  const ann = editor(s, 'ann', 'Ann Writer', 'publisher')
  const bob = editor(s, 'bob', 'Bob', 'writer')

  t.equal((await ann.post('/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 1 })).status, 200)
  t.equal((await ann.post('/mutate', { type: 'put_entry', collection: 'notes', id: 'new', data: { n: 9 } })).status, 200)
  t.equal((await ann.post('/mutate', { type: 'delete_entry', collection: 'notes', id: 'b' })).status, 200)
  t.equal(await read(s, 'content/notes/a.json'), '{"n":0}\n', 'base untouched by a draft')
  t.equal(git(s.repoDir, 'status', '--porcelain'), '', 'working tree clean')

  const annList = await (await ann.get('/entries?collection=notes')).json()
  t.same(annList.entries.map((e: any) => [e.id, e.data?.n, e.draft === true]), [['a', 1, true], ['new', 9, true]])
  t.equal(annList.pagination.total, 2)
  const bobList = await (await bob.get('/entries?collection=notes')).json()
  t.same(bobList.entries.map((e: any) => [e.id, e.data?.n, e.draft === true]), [['a', 0, false], ['b', 0, false]], 'nobody else sees drafts')
  const q = await (await ann.get('/entries?collection=notes&q=new')).json()
  t.same(q.entries.map((e: any) => e.id), ['new'])

  const status = await (await ann.get('/draft')).json()
  t.match(status, { hasDrafts: true, count: 3, canPublish: true })
  t.match(await (await bob.get('/draft')).json(), { hasDrafts: false, count: 0, canPublish: false })

  // Bob may not publish; Ann's drafts are not his to publish anyway.
  t.equal((await bob.post('/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 5 })).status, 200)
  const bobPub = await (await bob.post('/publish', {})).json()
  t.equal(bobPub.published.length, 0)
  t.equal(bobPub.failed.length, 1)

  await writeFile(path.join(s.repoDir, 'README.md'), '# changed by hand\n')
  await writeFile(path.join(s.repoDir, 'staged.txt'), 'user staged\n')
  git(s.repoDir, 'add', 'staged.txt')

  const res = await ann.post('/publish', {})
  t.equal(res.status, 200)
  const pub = await res.json()
  t.same(pub.published.map((p: any) => [p.id, p.deleted]).sort(), [['a', false], ['b', true], ['new', false]])
  t.same(pub.conflicts, [])
  t.same(pub.failed, [])
  t.match(pub.commit, /^[0-9a-f]{40}$/)
  t.same(pub.rebuild, { triggered: true, ok: true })
  t.equal(await read(s, 'content/notes/a.json'), '{"n":1}\n', 'only the value changed, in the file\'s own style')
  t.equal(await read(s, 'content/notes/new.json'), '{\n  "n": 9\n}\n')
  await t.rejects(read(s, 'content/notes/b.json'))

  const names = git(s.repoDir, 'show', '--name-only', '--format=', pub.commit).split('\n').sort()
  t.same(names, ['content/notes/a.json', 'content/notes/b.json', 'content/notes/new.json'])
  t.equal(git(s.repoDir, 'show', '-s', '--format=%an <%ae>', pub.commit), 'Ann Writer <ann@users.git-cms.invalid>')
  t.match(git(s.repoDir, 'show', '-s', '--format=%B', pub.commit), /notes\/a/)
  t.match(git(s.repoDir, 'status', '--porcelain'), /M README\.md/, 'unrelated change stays out of the commit')
  t.match(git(s.repoDir, 'status', '--porcelain'), /A {2}staged\.txt/, 'user-staged file stays staged and uncommitted')

  t.equal(hook.calls.length, 1)
  const call = hook.calls[0]!
  t.equal(call.method, 'POST')
  t.equal(call.headers['x-cms-signature'], 'sha256=' + createHmac('sha256', 'hook-secret').update(call.body).digest('hex'))
  const payload = JSON.parse(call.body)
  t.match(payload, { event: 'publish', commit: pub.commit, deploymentId: 'dep-1' })
  t.equal(payload.published.length, 3)

  t.match(await (await ann.get('/draft')).json(), { hasDrafts: false, count: 0 })
  const h = await (await ann.get('/history?collection=notes&id=a')).json()
  t.same(h.history.map((x: any) => x.action), ['publish'])
  t.same(h.history[0].editor, { id: 'ann', name: 'Ann Writer' })
  const bobAfter = await (await bob.get('/entries?collection=notes&id=a')).json()
  t.equal(bobAfter.entries[0].data.n, 5, 'Bob still sees his own draft')
})

t.test('stale_entry when base changed since the draft; the draft is kept and nothing is written', async t => {
  const s = await startServer(t, { config: baseConfig, files })
  const ann = editor(s, 'ann', 'Ann', 'publisher')
  t.equal((await ann.post('/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 1 })).status, 200)
  await writeFile(path.join(s.repoDir, 'content/notes/a.json'), '{"n":42}\n')
  const fp = await repoFingerprint(s.repoDir)
  const pub = await (await ann.post('/publish', { collection: 'notes', id: 'a' })).json()
  t.same(pub.published, [])
  t.match(pub.conflicts, [{ collection: 'notes', id: 'a', code: 'stale_entry', currentRevision: 2 }])
  t.equal(await repoFingerprint(s.repoDir), fp)
  t.match(await (await ann.get('/draft')).json(), { count: 1 })
})

t.test('DELETE /draft scoped by collection and id, writing nothing to base', async t => {
  const s = await startServer(t, { config: baseConfig, files })
  const ann = editor(s, 'ann', 'Ann', 'publisher')
  await ann.post('/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 1 })
  await ann.post('/mutate', { type: 'save_field', collection: 'notes', id: 'b', field: 'n', value: 1 })
  await ann.post('/mutate', { type: 'save_field', collection: 'posts', id: 'hello', field: 'title', value: 'X' })
  const fp = await repoFingerprint(s.repoDir)
  t.equal((await ann.del('/draft?collection=../x')).status, 400)
  t.equal((await s.request(`${API}/draft`, { method: 'DELETE', headers: { 'x-user': 'ann' } })).status, 403)
  t.same(await (await ann.del('/draft?collection=notes&id=a')).json(), { ok: true, cleared: ['notes/a'] })
  t.same(await (await ann.del('/draft?collection=notes')).json(), { ok: true, cleared: ['notes/b'] })
  t.same(await (await ann.del('/draft')).json(), { ok: true, cleared: ['posts/hello'] })
  t.equal(await read(s, 'content/notes/a.json'), '{"n":0}\n')
  t.match(await (await ann.get('/draft')).json(), { hasDrafts: false, count: 0 })
  t.not(await repoFingerprint(s.repoDir), fp, 'only the draft ref changed')
  t.equal(git(s.repoDir, 'status', '--porcelain'), '')
})

t.test('concurrent draft saves of one editor are all kept', async t => {
  const s = await startServer(t, { config: baseConfig, files })
  const ann = editor(s, 'ann', 'Ann', 'publisher')
  const ids = Array.from({ length: 20 }, (_, i) => `c${i}`)
  const results = await Promise.all(ids.map(async id => (await ann.post('/mutate', { type: 'put_entry', collection: 'notes', id, data: { n: id } })).status))
  t.same(results, ids.map(() => 200))
  t.match(await (await ann.get('/draft')).json(), { count: 20 })
  const list = await (await ann.get('/entries?collection=notes&pageSize=100')).json()
  for (const id of ids) t.ok(list.entries.some((e: any) => e.id === id && e.data.n === id), id)
})

t.test('a held index.lock or a refusing pre-commit hook gives commitError; the next publish commits the files', async t => {
  const s = await startServer(t, { config: baseConfig, files, env: { CMS_GIT_ON_PUBLISH: 'true' } })
  const ann = editor(s, 'ann', 'Ann', 'publisher')
  const lock = path.join(s.repoDir, '.git/index.lock')
  await ann.post('/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 1 })
  await writeFile(lock, '')
  const started = Date.now()
  const locked = await (await ann.post('/publish', {})).json()
  t.ok(Date.now() - started < 15000, 'no hang')
  t.equal(locked.published.length, 1)
  t.equal(locked.commit, undefined)
  t.match(locked.commitError, /index\.lock/)
  t.equal(await read(s, 'content/notes/a.json'), '{"n":1}\n', 'the file stays written')
  await rm(lock)

  const hookFile = path.join(s.repoDir, '.git/hooks/pre-commit')
  await writeFile(hookFile, '#!/bin/sh\necho "refused by policy" >&2\nexit 1\n')
  await chmod(hookFile, 0o755)
  await ann.post('/mutate', { type: 'save_field', collection: 'notes', id: 'b', field: 'n', value: 2 })
  const hooked = await (await ann.post('/publish', {})).json()
  t.equal(hooked.commit, undefined)
  t.match(hooked.commitError, /refused by policy|pre-commit|hook/)
  await rm(hookFile)

  await ann.post('/mutate', { type: 'save_field', collection: 'posts', id: 'hello', field: 'title', value: 'Third' })
  const ok = await (await ann.post('/publish', {})).json()
  t.match(ok.commit, /^[0-9a-f]{40}$/)
  const names = git(s.repoDir, 'show', '--name-only', '--format=', ok.commit).split('\n').sort()
  t.same(names, ['content/notes/a.json', 'content/notes/b.json', 'content/posts/hello.md'])
  t.equal(git(s.repoDir, 'status', '--porcelain'), '')
})

t.test('a failing or slow webhook: retryAvailable, a receipt, and retryRebuild resends without republishing', async t => {
  let failing = true
  const hook = await receiver(t, () => ({ status: failing ? 500 : 204 }))
  const config = { ...baseConfig, delivery: { publish: { webhookUrl: hook.url, method: 'PUT' as const } } }
  const s = await startServer(t, { config, files })
  const ann = editor(s, 'ann', 'Ann', 'publisher')
  await ann.post('/mutate', { type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 1 })
  const pub = await (await ann.post('/publish', {})).json()
  t.equal(pub.published.length, 1)
  t.same(pub.rebuild, { triggered: true, ok: false })
  t.equal(pub.retryAvailable, true)
  t.equal(hook.calls[0]?.method, 'PUT')
  t.ok((await readdir(path.join(s.repoDir, '.git/cms'))).some(f => /receipt/.test(f)), 'receipt kept under .git/cms')
  t.match(await (await ann.get('/draft')).json(), { retryRebuild: { available: true } })

  failing = false
  const fp = await repoFingerprint(s.repoDir)
  const retry = await (await ann.post('/publish', { retryRebuild: true })).json()
  t.same(retry.published, [])
  t.same(retry.rebuild, { triggered: true, ok: true })
  t.equal(hook.calls.length, 2)
  t.equal(hook.calls[1]!.body, hook.calls[0]!.body, 'the same request is resent')
  t.equal(await repoFingerprint(s.repoDir), fp, 'nothing republished')
  t.match(await (await ann.get('/draft')).json(), { retryRebuild: { available: false } })
})

t.test('publish body validation and CSRF', async t => {
  const s = await startServer(t, { config: baseConfig, files })
  const ann = editor(s, 'ann', 'Ann', 'publisher')
  const fp = await repoFingerprint(s.repoDir)
  t.equal((await ann.post('/publish', { collection: '__proto__' })).status, 400)
  t.equal((await ann.post('/publish', { collection: 5 })).status, 400)
  t.equal((await ann.post('/publish', { id: 'a' })).status, 400)
  t.equal((await ann.post('/publish', { extra: true })).status, 400)
  t.equal((await s.request(`${API}/publish`, { method: 'POST', headers: { 'x-user': 'ann' } })).status, 403)
  t.equal((await s.request(`${API}/publish`, { method: 'POST', headers: { 'x-cms-request': '1' } })).status, 401)
  t.equal((await s.request(`${API}/publish`, { method: 'POST', headers: { 'x-user': '../ann', 'x-cms-request': '1' } })).status, 401)
  t.equal(await repoFingerprint(s.repoDir), fp)
})

t.test('deployment status without a provider is unknown', async t => {
  const s = await startServer(t, { config: baseConfig, files })
  t.same(await (await editor(s, 'ann', 'Ann', 'publisher').get('/deployment')).json(), { configured: false, state: 'unknown' })
})
