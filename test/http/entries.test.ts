import t from 'tap'
import { symlink, writeFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { startServer, repoFingerprint, git } from '../helpers/site.js'

const API = '/api/cms'

t.test('lists a page of entries with pagination and the 100 clamp', async t => {
  const files: Record<string, string> = {}
  for (let i = 0; i < 130; i++) files[`content/bulk/item-${String(i).padStart(3, '0')}.json`] = JSON.stringify({ title: `Item number ${i}` }) + '\n'
  const s = await startServer(t, { files })
  const cookie = await s.login()
  const first = await (await s.request(`${API}/entries?collection=bulk`, { headers: { cookie } })).json()
  t.equal(first.collection, 'bulk')
  t.equal(first.entries.length, 24)
  t.same(first.pagination, { page: 1, pageSize: 24, total: 130, totalPages: 6, hasPrev: false, hasNext: true })
  t.equal(first.entries[0].id, 'item-000')
  t.same(first.entries[0].data, { title: 'Item number 0' })
  t.equal(first.entries[0].revision, 1)
  const last = await (await s.request(`${API}/entries?collection=bulk&page=6`, { headers: { cookie } })).json()
  t.equal(last.entries.length, 130 - 5 * 24)
  t.same(last.pagination, { page: 6, pageSize: 24, total: 130, totalPages: 6, hasPrev: true, hasNext: false })
  const clamped = await (await s.request(`${API}/entries?collection=bulk&pageSize=500`, { headers: { cookie } })).json()
  t.equal(clamped.pagination.pageSize, 100)
  t.equal(clamped.entries.length, 100)
  const beyond = await (await s.request(`${API}/entries?collection=bulk&page=99`, { headers: { cookie } })).json()
  t.same(beyond.entries, [])
  for (const bad of ['page=0', 'page=-1', 'page=abc', 'pageSize=0', 'pageSize=1.5', 'page=1&page=2', 'page=1234567890']) {
    const res = await s.request(`${API}/entries?collection=bulk&${bad}`, { headers: { cookie } })
    t.equal(res.status, 400, bad)
    t.type((await res.json()).error, 'string')
  }
  const zero = await s.request(`${API}/entries?collection=bulk&page=0`, { headers: { cookie } })
  t.match(await zero.json(), { error: 'Query parameter page must be a positive integer', field: 'page' })
})

t.test('q searches ids, title fields and then every other string, case-insensitively', async t => {
  const s = await startServer(t, {
    files: {
      'content/things/alpha.json': '{"title":"The Quick Fox"}\n',
      'content/things/beta.json': '{"name":"Slow turtle"}\n',
      'content/things/gamma-fox.json': '{"label":"Other"}\n',
      'content/things/delta.json': '{"body":"fox only in the body"}\n'
    }
  })
  const cookie = await s.login()
  const ids = async (q: string): Promise<string[]> =>
    (await (await s.request(`${API}/entries?collection=things&q=${encodeURIComponent(q)}`, { headers: { cookie } })).json()).entries.map((e: { id: string }) => e.id)
  t.same(await ids('fox'), ['alpha', 'gamma-fox', 'delta'], 'id and title matches first, then the body (test/http/search.test.ts has the rest)')
  t.same(await ids('TURTLE'), ['beta'])
  t.same(await ids('nothing-matches'), [])
  t.same(await ids(''), ['alpha', 'beta', 'delta', 'gamma-fox'])
})

t.test('id= reads one entry inside entries; unknown id is 404', async t => {
  const s = await startServer(t, { files: { 'content/things/one.yaml': 'title: One\ncount: 3\n' } })
  const cookie = await s.login()
  const res = await s.request(`${API}/entries?collection=things&id=one`, { headers: { cookie } })
  t.equal(res.status, 200)
  const body = await res.json()
  t.same(body.entries, [{ id: 'one', revision: 1, data: { title: 'One', count: 3 } }])
  t.equal((await s.request(`${API}/entries?collection=things&id=two`, { headers: { cookie } })).status, 404)
  t.equal((await s.request(`${API}/entries?collection=nope&id=two`, { headers: { cookie } })).status, 404)
})

t.test('unreadable entries are listed with readError and read directly as 422', async t => {
  const s = await startServer(t, {
    files: {
      'content/things/good.json': '{"title":"Good"}\n',
      'content/things/broken.json': '{"title": "Bro',
      'content/things/scalar.json': '42\n'
    }
  })
  const cookie = await s.login()
  const list = await (await s.request(`${API}/entries?collection=things`, { headers: { cookie } })).json()
  const broken = list.entries.find((e: { id: string }) => e.id === 'broken')
  t.ok(broken.readError.message, 'readError has a message')
  t.notOk('data' in broken, 'no data on an unreadable entry')
  t.ok(list.entries.find((e: { id: string }) => e.id === 'scalar').readError, 'a top-level scalar is unreadable (a list is { items })')
  const direct = await s.request(`${API}/entries?collection=things&id=broken`, { headers: { cookie } })
  t.equal(direct.status, 422)
  t.type((await direct.json()).error, 'string')
})

t.test('schema-invalid entries are listed as stored with validationIssues', async t => {
  const s = await startServer(t, {
    config: { collections: { items: { format: 'json', schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, n: { type: 'integer' } } } } } },
    files: { 'content/items/ok.json': '{"title":"Fine","n":1}\n', 'content/items/bad.json': '{"n":"seven"}\n' }
  })
  const cookie = await s.login()
  const list = await (await s.request(`${API}/entries?collection=items`, { headers: { cookie } })).json()
  const bad = list.entries.find((e: { id: string }) => e.id === 'bad')
  t.same(bad.data, { n: 'seven' })
  t.same(bad.validationIssues.map((i: { path: string }) => i.path).sort(), ['n', 'title'])
  for (const issue of bad.validationIssues) {
    t.type(issue.code, 'string')
    t.type(issue.message, 'string')
  }
  t.notOk('validationIssues' in list.entries.find((e: { id: string }) => e.id === 'ok'))
})

t.test('revisions increase when a file changes outside the service and are never reused', async t => {
  const s = await startServer(t, { files: { 'content/things/x.json': '{"title":"v1"}\n' } })
  const cookie = await s.login()
  const rev = async (): Promise<number | null> => {
    const res = await s.request(`${API}/entries?collection=things&id=x`, { headers: { cookie } })
    return res.status === 200 ? (await res.json()).entries[0].revision : null
  }
  t.equal(await rev(), 1)
  // A search opens the full-text index now: its first catch-up re-checks changed files too, and on a
  // busy machine it could otherwise run in the middle of a write below and see the emptied file (a
  // real change the service would count, but not the one this test counts).
  t.equal((await s.request(`${API}/entries?collection=things&q=v1`, { headers: { cookie } })).status, 200)
  await writeFile(path.join(s.repoDir, 'content/things/x.json'), '{"title":"v2 from a text editor"}\n')
  t.equal(await rev(), 2)
  t.equal(await rev(), 2, 'reading again does not bump')
  await rm(path.join(s.repoDir, 'content/things/x.json'))
  t.equal(await rev(), null, 'deleted outside: 404')
  await writeFile(path.join(s.repoDir, 'content/things/x.json'), '{"title":"back"}\n')
  t.equal(await rev(), 4, 'a re-created entry continues after its deletion revision')
  // a git operation counts as an outside change too
  git(s.repoDir, 'checkout', '--', 'content/things/x.json')
  t.equal(await rev(), 5)
  // and the counters survive a restart
  await s.close()
  const again = await startServer(t, { repoDir: s.repoDir })
  const cookie2 = await again.login()
  const res = await again.request(`${API}/entries?collection=things&id=x`, { headers: { cookie: cookie2 } })
  t.equal((await res.json()).entries[0].revision, 5)
})

t.test('a change made while the service was down is noticed at start', async t => {
  const s = await startServer(t, { files: { 'content/things/x.json': '{"title":"v1"}\n' } })
  const cookie = await s.login()
  await s.request(`${API}/entries?collection=things&id=x`, { headers: { cookie } })
  await s.close()
  await writeFile(path.join(s.repoDir, 'content/things/x.json'), '{"title":"edited while down"}\n')
  const again = await startServer(t, { repoDir: s.repoDir })
  const c2 = await again.login()
  const body = await (await again.request(`${API}/entries?collection=things&id=x`, { headers: { cookie: c2 } })).json()
  t.equal(body.entries[0].revision, 2)
  t.equal(body.entries[0].data.title, 'edited while down')
})

t.test('hostile names are refused before any file or git access', async t => {
  const s = await startServer(t, { files: { 'content/things/x.json': '{"title":"v1"}\n' } })
  const cookie = await s.login()
  const before = await repoFingerprint(s.repoDir)
  const hostile = ['-x', '..', '../..', '__proto__', 'a/b', 'a%00b', 'x'.repeat(1100), 'UPPER', '.git', 'constructor', '%2e%2e%2fetc']
  for (const name of hostile) {
    const res = await s.request(`${API}/entries?collection=${name}`, { headers: { cookie } })
    t.equal(res.status, 400, `collection ${name}`)
    t.type((await res.json()).error, 'string')
    const res2 = await s.request(`${API}/entries?collection=things&id=${name === 'UPPER' ? '-upper' : name}`, { headers: { cookie } })
    t.equal(res2.status, 400, `id ${name}`)
  }
  t.equal((await s.request(`${API}/entries`, { headers: { cookie } })).status, 400, 'missing collection')
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing changed')
})

t.test('a symlink that leaves the repository is never read', async t => {
  const s = await startServer(t, { files: { 'content/things/x.json': '{"title":"v1"}\n' } })
  const cookie = await s.login()
  const outside = path.join(path.dirname(s.repoDir), `outside-${path.basename(s.repoDir)}.json`)
  await writeFile(outside, '{"secret":"do not leak"}\n')
  t.teardown(async () => { await rm(outside, { force: true }) })
  await symlink(outside, path.join(s.repoDir, 'content/things/leak.json'))
  await symlink('../../.git/config', path.join(s.repoDir, 'content/things/gitconfig.json'))
  const text = await (await s.request(`${API}/entries?collection=things`, { headers: { cookie } })).text()
  t.notMatch(text, 'do not leak')
  t.notMatch(text, 'repositoryformatversion')
  const body = JSON.parse(text)
  t.ok(body.entries.find((e: { id: string }) => e.id === 'leak').readError)
  const direct = await s.request(`${API}/entries?collection=things&id=leak`, { headers: { cookie } })
  t.equal(direct.status, 422)
  t.notMatch(await direct.text(), 'do not leak')
})

t.test('schema: explicit, inferred, template and metadata defaults', async t => {
  const s = await startServer(t, {
    config: {
      collections: {
        items: { format: 'json', label: 'Items', orderable: true, schema: { type: 'object', properties: { title: { type: 'string', default: 'Untitled' }, tags: { type: 'array' }, n: { type: 'integer' }, on: { type: 'boolean' } } } }
      }
    },
    files: { 'content/notes/a.json': '{"title":"A","count":2}\n', 'content/notes/b.json': '{"title":"B","flag":true}\n' }
  })
  const cookie = await s.login()
  const explicit = await (await s.request(`${API}/schema?collection=items`, { headers: { cookie } })).json()
  t.equal(explicit.source, 'explicit')
  t.same(explicit.template, { title: 'Untitled', tags: [], n: 0, on: false })
  t.same(explicit.metadata, { label: 'Items', description: '', icon: '', creatable: true, orderable: true, deletable: true, singletonId: null, order: 0 })
  const inferred = await (await s.request(`${API}/schema?collection=notes`, { headers: { cookie } })).json()
  t.equal(inferred.source, 'inferred')
  t.same(inferred.schema.properties, { count: { type: 'integer' }, flag: { type: 'boolean' }, title: { type: 'string' } })
  t.equal(inferred.metadata.label, 'Notes')
  t.equal((await s.request(`${API}/schema?collection=missing`, { headers: { cookie } })).status, 404)
  t.equal((await s.request(`${API}/schema?collection=..`, { headers: { cookie } })).status, 400)
  const meta = await (await s.request(`${API}/collections-metadata`, { headers: { cookie } })).json()
  t.same(meta, { collections: [] }, 'no dynamic collections yet')
})

t.test('reads need authentication', async t => {
  const s = await startServer(t)
  for (const p of ['/entries?collection=posts', '/schema?collection=posts', '/collections-metadata', '/history?collection=posts&id=x', '/draft', '/deployment']) {
    const res = await s.request(API + p)
    t.equal(res.status, 401, p)
    t.equal(res.headers.get('cache-control'), 'no-store')
  }
})
