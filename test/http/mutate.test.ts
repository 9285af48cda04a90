import t, { type Test } from 'tap'
import { readFile, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { startServer, repoFingerprint, writeHeaders, git, type TestServer } from '../helpers/site.js'

const API = '/api/cms'

const config = {
  collections: {
    posts: {
      format: 'md' as const,
      schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } }, body: { type: 'string' } } }
    },
    pages: {
      format: 'json' as const,
      orderable: true,
      schema: { type: 'object', properties: { title: { type: 'string' }, order: { type: 'integer' }, sections: { type: 'array' }, meta: { type: 'object' } } }
    },
    people: { format: 'yaml' as const },
    settings: { format: 'json' as const, singletonId: 'site', creatable: true, deletable: false },
    locked: { format: 'json' as const, creatable: false, deletable: false }
  }
}

const files = {
  'content/posts/hello.md': '---\ntitle: Hello\ntags:\n  - a\n---\n# Hello\n\nSome *prose*  with  odd   spacing.\n',
  'content/pages/home.json': '{"title":"Home","order":0,"sections":[]}\n',
  'content/pages/about.json': '{"title":"About","order":1}\n',
  'content/pages/contact.json': '{"title":"Contact","order":2}\n',
  'content/people/ada.yaml': 'name: Ada\nbio: First programmer\n',
  'content/settings/site.json': '{"title":"Site"}\n',
  'content/locked/only.json': '{"title":"Only"}\n'
}

async function setup (t: Test): Promise<{ s: TestServer, cookie: string, mutate: (body: unknown) => Promise<Response>, read: (c: string, id: string) => Promise<any> }> {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  const mutate = async (body: unknown): Promise<Response> => await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })
  const read = async (c: string, id: string): Promise<any> => {
    const res = await s.request(`${API}/entries?collection=${c}&id=${id}`, { headers: { cookie } })
    return res.status === 200 ? (await res.json()).entries[0] : { status: res.status }
  }
  return { s, cookie, mutate, read }
}

const file = async (s: TestServer, rel: string): Promise<string> => await readFile(path.join(s.repoDir, rel), 'utf8')

t.test('save_field on Markdown keeps the body byte for byte; saving the body keeps frontmatter', async t => {
  const { s, mutate } = await setup(t)
  const res = await mutate({ type: 'save_field', collection: 'posts', id: 'hello', field: 'title', value: 'Hello again', expectedRevision: 1 })
  t.equal(res.status, 200)
  t.same(await res.json(), { ok: true, revision: 2 })
  const text = await file(s, 'content/posts/hello.md')
  t.ok(text.endsWith('\n# Hello\n\nSome *prose*  with  odd   spacing.\n'), 'body untouched')
  t.match(text, /title: Hello again/)
  const res2 = await mutate({ type: 'save_field', collection: 'posts', id: 'hello', field: 'body', value: 'New body\n' })
  t.same(await res2.json(), { ok: true, revision: 3 })
  t.equal(await file(s, 'content/posts/hello.md'), '---\ntitle: Hello again\ntags:\n  - a\n---\nNew body\n')
})

t.test('save_field with nested paths, JSON two-space indent, YAML stays YAML', async t => {
  const { s, mutate, read } = await setup(t)
  t.equal((await mutate({ type: 'save_field', collection: 'pages', id: 'home', field: 'meta.seo.title', value: 'Welcome' })).status, 200)
  // Only the new key is written, in the file's own (compact) style.
  t.equal(await file(s, 'content/pages/home.json'), '{"title":"Home","order":0,"sections":[],"meta":{"seo":{"title":"Welcome"}}}\n')
  t.equal((await mutate({ type: 'save_field', collection: 'people', id: 'ada', field: 'bio', value: 'Wrote the first program' })).status, 200)
  t.equal(await file(s, 'content/people/ada.yaml'), 'name: Ada\nbio: Wrote the first program\n')
  t.equal((await read('people', 'ada')).revision, 2)
})

t.test('put_entry creates and replaces; creatable, singleton and schema are enforced', async t => {
  const { s, mutate, read } = await setup(t)
  const created = await mutate({ type: 'put_entry', collection: 'posts', id: 'new-post', data: { title: 'New', body: 'Text\n' } })
  t.same(await created.json(), { ok: true, revision: 1 })
  t.equal(await file(s, 'content/posts/new-post.md'), '---\ntitle: New\n---\nText\n')
  const before = await repoFingerprint(s.repoDir)
  const invalid = await mutate({ type: 'put_entry', collection: 'posts', id: 'new-post', data: { body: 'no title' } })
  t.equal(invalid.status, 400)
  const body = await invalid.json()
  t.equal(body.error, 'Entry does not match collection schema')
  t.same(body.issues.map((i: { path: string }) => i.path), ['title'])
  t.equal((await mutate({ type: 'put_entry', collection: 'locked', id: 'another', data: { title: 'x' } })).status, 403)
  t.equal((await mutate({ type: 'put_entry', collection: 'settings', id: 'other', data: { title: 'x' } })).status, 403)
  t.equal(await repoFingerprint(s.repoDir), before, 'refused writes changed nothing')
  t.equal((await mutate({ type: 'put_entry', collection: 'settings', id: 'site', data: { title: 'Renamed' } })).status, 200)
  t.same((await read('settings', 'site')).data, { title: 'Renamed' })
})

t.test('stored validation issues do not block a write; new ones do', async t => {
  const { s, mutate } = await setup(t)
  await writeFile(path.join(s.repoDir, 'content/posts/bad.md'), '---\ntags: [1]\n---\nbody\n')
  // already missing title and a wrong tag type: saving another field is fine
  const ok = await mutate({ type: 'save_field', collection: 'posts', id: 'bad', field: 'extra', value: 'x' })
  t.equal(ok.status, 200)
  const worse = await mutate({ type: 'save_field', collection: 'posts', id: 'hello', field: 'title', value: 42 })
  t.equal(worse.status, 400)
  t.same((await worse.json()).issues.map((i: { path: string }) => i.path), ['title'])
})

t.test('delete_entry: 404 missing, 403 not deletable, history kept, revision continues on re-create', async t => {
  const { s, mutate, read } = await setup(t)
  t.equal((await mutate({ type: 'delete_entry', collection: 'people', id: 'nobody' })).status, 404)
  t.equal((await mutate({ type: 'delete_entry', collection: 'locked', id: 'only' })).status, 403)
  const del = await mutate({ type: 'delete_entry', collection: 'people', id: 'ada', expectedRevision: 1 })
  t.same(await del.json(), { ok: true, revision: 2 })
  t.equal((await read('people', 'ada')).status, 404)
  const again = await mutate({ type: 'put_entry', collection: 'people', id: 'ada', data: { name: 'Ada again' } })
  t.same(await again.json(), { ok: true, revision: 3 })
  const history = await (await s.request(`${API}/history?collection=people&id=ada`, { headers: { cookie: (await s.login()) } })).json()
  t.same(history.history.map((h: { action: string }) => h.action), ['delete'])
  t.same(history.history[0].data, { name: 'Ada', bio: 'First programmer' })
})

t.test('reorder_entries writes positions of changed entries only', async t => {
  const { s, mutate, read, cookie } = await setup(t)
  const list = await (await s.request(`${API}/entries?collection=pages`, { headers: { cookie } })).json()
  t.same(list.entries.map((e: { id: string }) => e.id), ['home', 'about', 'contact'])
  const colRev = 3
  t.equal((await mutate({ type: 'reorder_entries', collection: 'pages', order: ['about', 'home'] })).status, 400, 'missing id')
  t.equal((await mutate({ type: 'reorder_entries', collection: 'pages', order: ['about', 'home', 'home', 'contact'] })).status, 400, 'duplicate')
  // 10,000 ids held the event loop 50 ms; 100,000 (the old limit) 280 ms.
  const before = await repoFingerprint(s.repoDir)
  const tooMany = await mutate({ type: 'reorder_entries', collection: 'pages', order: ['about', 'home', 'contact', ...Array.from({ length: 9998 }, (_, i) => `extra-${i}`)] })
  t.equal(tooMany.status, 400, 'over 10,000 ids')
  t.match(await tooMany.json(), { code: 'bad_request', field: 'order', error: /more than 10000 items/ })
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing written')
  t.equal((await mutate({ type: 'reorder_entries', collection: 'pages', order: ['about', 'home', 'contact'], expectedRevision: 99 })).status, 409)
  t.equal((await mutate({ type: 'reorder_entries', collection: 'people', order: ['ada'] })).status, 403, 'not orderable')
  const res = await mutate({ type: 'reorder_entries', collection: 'pages', order: ['about', 'home', 'contact'], expectedRevision: colRev })
  t.equal(res.status, 200)
  t.equal((await res.json()).revision, colRev + 2)
  t.equal((await read('pages', 'contact')).revision, 1, 'unchanged position: untouched')
  t.equal((await read('pages', 'about')).data.order, 0)
  const after = await (await s.request(`${API}/entries?collection=pages`, { headers: { cookie } })).json()
  t.same(after.entries.map((e: { id: string }) => e.id), ['about', 'home', 'contact'])
  const h = await (await s.request(`${API}/history?collection=pages&id=home`, { headers: { cookie } })).json()
  t.same(h.history.map((x: { action: string }) => x.action), ['reorder'])
})

t.test('update_page_layout sets the layout field', async t => {
  const { mutate, read } = await setup(t)
  const layout = [{ type: 'hero', heading: 'Hi' }, { type: 'text', text: 'Body' }]
  t.equal((await mutate({ type: 'update_page_layout', collection: 'pages', id: 'home', layout })).status, 200)
  t.same((await read('pages', 'home')).data.sections, layout)
  t.equal((await mutate({ type: 'update_page_layout', collection: 'pages', id: 'home', layout: 'nope' })).status, 400)
  t.equal((await mutate({ type: 'update_page_layout', collection: 'pages', id: 'missing', layout: [] })).status, 404)
})

t.test('create_collection and delete_collection', async t => {
  const { s, mutate, cookie } = await setup(t)
  const schema = { type: 'object', properties: { title: { type: 'string' } } }
  const created = await mutate({ type: 'create_collection', collection: 'events', schema, metadata: { label: 'Events', icon: '📅', orderable: true } })
  t.equal(created.status, 200)
  t.equal((await mutate({ type: 'create_collection', collection: 'events', schema })).status, 409)
  t.equal((await mutate({ type: 'create_collection', collection: 'posts', schema })).status, 409, 'explicit exists')
  t.equal((await mutate({ type: 'create_collection', collection: 'bad', schema: { type: 'nonsense' } })).status, 400)
  const meta = await (await s.request(`${API}/collections-metadata`, { headers: { cookie } })).json()
  t.equal(meta.collections.length, 1)
  t.match(meta.collections[0], { id: 'events', label: 'Events', icon: '📅', orderable: true, creatable: true, deletable: true, schema })
  t.type(meta.collections[0].created_at, 'number')
  t.ok(JSON.parse(await file(s, '.cms/collections/events.json')).schema)
  t.equal((await mutate({ type: 'put_entry', collection: 'events', id: 'launch', data: { title: 'Launch' } })).status, 200)
  t.equal((await mutate({ type: 'save_field', collection: 'events', id: 'launch', field: 'title', value: 'Launch day' })).status, 200)
  t.equal((await mutate({ type: 'delete_collection', collection: 'posts' })).status, 409, 'explicit cannot be deleted')
  t.equal((await mutate({ type: 'delete_collection', collection: 'events' })).status, 200)
  t.equal((await s.request(`${API}/entries?collection=events`, { headers: { cookie } })).status, 404)
  t.same((await (await s.request(`${API}/history?collection=people&id=ada`, { headers: { cookie } })).json()).history, [])
  t.equal(git(s.repoDir, 'ls-tree', '-r', '--name-only', 'refs/cms/history').split('\n').filter(l => l.startsWith('events/')).length, 0, 'history of the collection removed')
})

t.test('expectedRevision conflicts are 409 with currentRevision and change nothing', async t => {
  const { s, mutate } = await setup(t)
  const before = await repoFingerprint(s.repoDir)
  const res = await mutate({ type: 'save_field', collection: 'posts', id: 'hello', field: 'title', value: 'x', expectedRevision: 7 })
  t.equal(res.status, 409)
  t.same(await res.json(), { error: 'Revision conflict', code: 'revision_conflict', currentRevision: 1 })
  t.equal(await repoFingerprint(s.repoDir), before)
})

t.test('twenty racing saves with one expectedRevision: one wins', async t => {
  const { s, mutate } = await setup(t)
  const results = await Promise.all(Array.from({ length: 20 }, async (_, i) => {
    const res = await mutate({ type: 'save_field', collection: 'pages', id: 'about', field: 'title', value: `Racer ${i}`, expectedRevision: 1 })
    return { i, status: res.status, body: await res.json() }
  }))
  const winners = results.filter(r => r.status === 200)
  t.equal(winners.length, 1)
  t.equal(results.filter(r => r.status === 409).length, 19)
  t.ok(results.filter(r => r.status === 409).every(r => r.body.currentRevision === 2))
  t.equal(JSON.parse(await file(s, 'content/pages/about.json')).title, `Racer ${winners[0]!.i}`)
})

t.test('bad commands are 400 and write nothing', async t => {
  const { s, mutate, cookie } = await setup(t)
  const before = await repoFingerprint(s.repoDir)
  const bad: unknown[] = [
    { type: 'nope', collection: 'posts', id: 'hello' },
    { collection: 'posts', id: 'hello' },
    { type: 'save_field', collection: 'posts', id: 'hello', value: 'x' },
    { type: 'save_field', collection: 'posts', id: 'hello', field: 5, value: 'x' },
    { type: 'save_field', collection: 'posts', id: 'hello', field: '__proto__.polluted', value: 'x' },
    { type: 'save_field', collection: 'posts', id: 'hello', field: 'a..b', value: 'x' },
    { type: 'save_field', collection: 'posts', id: 'hello', field: 'constructor.prototype', value: 'x' },
    { type: 'save_field', collection: 'posts', id: 'hello', field: 'title.', value: 'x' },
    { type: 'save_field', collection: 'posts', id: '../hello', field: 'title', value: 'x' },
    { type: 'save_field', collection: '../posts', id: 'hello', field: 'title', value: 'x' },
    { type: 'save_field', collection: 'posts', id: 'hello', field: 'title', value: 'x', expectedRevision: 'one' },
    { type: 'save_field', collection: 'posts', id: 'hello', field: 'title', value: 'x', extra: true },
    { type: 'put_entry', collection: 'posts', id: 'hello', data: [] },
    { type: 'put_entry', collection: 'posts', id: 'hello', data: 'text' },
    { type: 'put_entry', collection: 'pages', id: 'home', data: JSON.parse('{"__proto__":{"polluted":true}}') },
    { type: 'put_entry', collection: 'pages', id: 'home', data: { nested: { constructor: { prototype: 1 } } } },
    { type: 'put_entry', collection: 'posts', id: 'hello', data: { title: 'x', body: 5 } },
    { type: 'delete_entry', collection: 'posts' },
    { type: 'reorder_entries', collection: 'pages', order: 'home' },
    { type: 'md_block', collection: 'posts', id: 'hello' }
  ]
  for (const body of bad) {
    const res = await mutate(body)
    t.equal(res.status, 400, JSON.stringify(body))
    t.type((await res.json()).error, 'string')
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution')
  const raw = async (body: string, type = 'application/json'): Promise<number> =>
    (await s.request(`${API}/mutate`, { method: 'POST', headers: { ...writeHeaders(cookie), 'content-type': type }, body })).status
  t.equal(await raw('{not json'), 400)
  t.equal(await raw('[]'), 400)
  t.equal(await raw('"text"'), 400)
  t.equal(await raw('type=save_field', 'application/x-www-form-urlencoded'), 415)
  t.equal(await raw(JSON.stringify({ type: 'save_field', collection: 'posts', id: 'hello', field: 'title', value: 'x'.repeat(1024 * 1024 + 10) })), 413)
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing written by any refused command')
})

t.test('unreadable entries: 422 for field saves, put_entry only with matching expectedRevision', async t => {
  const { s, mutate } = await setup(t)
  // Written whole under another name, then renamed: the watcher must not see it empty first (a
  // second outside change, revision 2, which made the last put_entry a 409 on a loaded machine).
  await writeFile(path.join(s.repoDir, 'broken.tmp'), '{"title": ')
  await rename(path.join(s.repoDir, 'broken.tmp'), path.join(s.repoDir, 'content/pages/broken.json'))
  const before = await repoFingerprint(s.repoDir)
  t.equal((await mutate({ type: 'save_field', collection: 'pages', id: 'broken', field: 'title', value: 'x' })).status, 422)
  t.equal((await mutate({ type: 'update_page_layout', collection: 'pages', id: 'broken', layout: [] })).status, 422)
  t.equal((await mutate({ type: 'put_entry', collection: 'pages', id: 'broken', data: { title: 'x' } })).status, 422)
  t.equal((await mutate({ type: 'put_entry', collection: 'pages', id: 'broken', data: { title: 'x' }, expectedRevision: 9 })).status, 409)
  t.equal(await repoFingerprint(s.repoDir), before)
  const ok = await mutate({ type: 'put_entry', collection: 'pages', id: 'broken', data: { title: 'Fixed' }, expectedRevision: 1 })
  t.equal(ok.status, 200)
  t.same(JSON.parse(await file(s, 'content/pages/broken.json')), { title: 'Fixed' })
})

t.test('mutations need the CSRF header and authentication', async t => {
  const { s, cookie } = await setup(t)
  const before = await repoFingerprint(s.repoDir)
  const body = JSON.stringify({ type: 'save_field', collection: 'posts', id: 'hello', field: 'title', value: 'x' })
  const noAuth = await s.request(`${API}/mutate`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-cms-request': '1' }, body })
  t.equal(noAuth.status, 401)
  const noCsrf = await s.request(`${API}/mutate`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body })
  t.equal(noCsrf.status, 403)
  t.equal((await noCsrf.json()).error, 'Missing required request header')
  t.equal(await repoFingerprint(s.repoDir), before)
})
