/**
 * What the Studio needs of the server (issue 32), over HTTP against a real repository: a save by
 * the editor who has an in-place draft goes into that draft (no conflict, base untouched, then
 * publish or discard); a name at sign-in gives a stable editorId that logout does not lock out;
 * `x-cms-relation` is checked (400, nothing written); GET /search answers over every collection;
 * assets and JSON over 1 KB are compressed.
 */
import t from 'tap'
import { readdir, readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import { startServer, repoFingerprint, writeHeaders, git, TEST_PASSWORD, type TestServer } from '../helpers/site.js'
import { renderMarkdown } from '../../lib/content/markdown/index.js'
import { editorIdForName, isSafeIdentityId } from '../../lib/auth/identity.js'
import { ensureBrowserBundle } from '../helpers/browser.js'
import { browserAssetDir } from '../../lib/http/admin-routes.js'

ensureBrowserBundle('studio')
ensureBrowserBundle('editor')

const API = '/api/cms'
const BODY = '# Hello\n\nFirst paragraph.\n\nLast paragraph about bakeries.\n'
const FILE = 'content/posts/hello.md'
const config = {
  collections: {
    posts: {
      format: 'md' as const,
      schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, author: { type: 'string', 'x-cms-relation': { collection: 'authors' } }, body: { type: 'string' } } }
    },
    authors: { format: 'json' as const, schema: { type: 'object', properties: { name: { type: 'string' } } } }
  }
}
const files = {
  [FILE]: `---\ntitle: Hello\n---\n${BODY}`,
  'content/authors/maria.json': '{"name":"Maria bakery fan"}\n'
}

async function login (s: TestServer, body: Record<string, unknown>): Promise<{ status: number, cookie: string, json: any }> {
  const res = await s.request(`${API}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return { status: res.status, cookie: (res.headers.get('set-cookie') ?? '').split(';')[0] ?? '', json: await res.json() }
}

t.test('a Studio save after an in-place draft goes into that draft; publish and discard', async t => {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  const mutate = async (body: unknown): Promise<Response> => await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })
  const entry = async (): Promise<any> => (await (await s.request(`${API}/entries?collection=posts&id=hello`, { headers: { cookie } })).json()).entries[0]
  const src = [...renderMarkdown(BODY, { collection: 'posts', id: 'hello' }).matchAll(/data-cms-src="([^"]+)"/g)].map(m => m[1] as string)[1] as string
  t.equal((await mutate({ type: 'md_block', collection: 'posts', id: 'hello', blockPath: 'body', src, html: 'First paragraph, edited in place.' })).status, 200)
  const seen = await entry()
  t.equal(seen.draft, true)
  const base = await readFile(path.join(s.repoDir, FILE), 'utf8')

  // The Studio sends the revision it read (the draft's): no conflict, the draft takes the title.
  const put = await mutate({ type: 'put_entry', collection: 'posts', id: 'hello', data: { ...seen.data, title: 'Hello from the Studio' }, expectedRevision: seen.revision })
  t.equal(put.status, 200, 'no conflict with the editor\'s own draft')
  t.equal(await readFile(path.join(s.repoDir, FILE), 'utf8'), base, 'the base file is untouched')
  const after = await entry()
  t.equal(after.draft, true)
  t.equal(after.data.title, 'Hello from the Studio')
  t.match(after.data.body, /edited in place/, 'the in-place edit is kept in the same draft')

  // Publish: both changes reach the file, the draft ref is gone.
  const pub = await s.request(`${API}/publish`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ collection: 'posts', id: 'hello' }) })
  t.equal(pub.status, 200)
  const text = await readFile(path.join(s.repoDir, FILE), 'utf8')
  t.match(text, /title: Hello from the Studio/)
  t.match(text, /edited in place/)
  t.equal((await entry()).draft, undefined)
  t.same(await s.services.drafts.keys(seen.editorId ?? (await (await s.request(`${API}/auth/session`, { headers: { cookie } })).json()).identity.id), [], 'no draft left')

  // Without a draft a save writes the file at once; with one, Discard drops it and the file stays.
  const direct = await entry()
  t.equal((await mutate({ type: 'save_field', collection: 'posts', id: 'hello', field: 'title', value: 'Direct', expectedRevision: direct.revision })).status, 200)
  t.match(await readFile(path.join(s.repoDir, FILE), 'utf8'), /title: Direct/)
  const d2 = await entry()
  const src2 = [...renderMarkdown(d2.data.body, { collection: 'posts', id: 'hello' }).matchAll(/data-cms-src="([^"]+)"/g)].map(m => m[1] as string)[2] as string
  t.equal((await mutate({ type: 'md_block', collection: 'posts', id: 'hello', blockPath: 'body', src: src2, html: 'Thrown away.' })).status, 200)
  const d3 = await entry()
  t.equal((await mutate({ type: 'save_field', collection: 'posts', id: 'hello', field: 'title', value: 'Also thrown away', expectedRevision: d3.revision })).status, 200)
  const fileBefore = await readFile(path.join(s.repoDir, FILE), 'utf8')
  const del = await s.request(`${API}/draft?collection=posts&id=hello`, { method: 'DELETE', headers: writeHeaders(cookie) })
  t.same(await del.json(), { ok: true, cleared: ['posts/hello'] })
  t.equal(await readFile(path.join(s.repoDir, FILE), 'utf8'), fileBefore)
  t.equal((await entry()).data.title, 'Direct')
})

t.test('a name at sign-in: a stable, safe editorId; logout ends only that session', async t => {
  const s = await startServer(t, { config, files })
  const a = await login(s, { password: TEST_PASSWORD, name: '  Maria  Ortiz ' })
  t.equal(a.status, 200)
  t.equal(a.json.identity.name, 'Maria Ortiz')
  t.match(a.json.identity.id, /^name-maria-ortiz-[0-9a-f]{16}$/)
  const b = await login(s, { password: TEST_PASSWORD, name: 'maria ortiz' })
  t.equal(b.json.identity.id, a.json.identity.id, 'the same name (any case) gets the same editorId')
  t.not((await login(s, { password: TEST_PASSWORD, name: 'Maria Ortis' })).json.identity.id, a.json.identity.id)
  t.not((await login(s, { password: TEST_PASSWORD })).json.identity.id, a.json.identity.id, 'no name: a random id as before')

  // A draft made in one session is there in the next one with the same name.
  const mutate = async (cookie: string, body: unknown): Promise<Response> => await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })
  t.equal((await mutate(a.cookie, { type: 'create_collection', collection: 'x', schema: {} })).status < 500, true)
  const src = [...renderMarkdown(BODY, { collection: 'posts', id: 'hello' }).matchAll(/data-cms-src="([^"]+)"/g)].map(m => m[1] as string)[1] as string
  t.equal((await mutate(a.cookie, { type: 'md_block', collection: 'posts', id: 'hello', blockPath: 'body', src, html: 'Maria was here.' })).status, 200)
  t.equal((await s.request(`${API}/auth/logout`, { method: 'POST', headers: { cookie: a.cookie } })).status, 200)
  t.equal((await s.request(`${API}/draft`, { headers: { cookie: a.cookie } })).status, 401, 'the signed-out cookie is refused')
  const c = await login(s, { password: TEST_PASSWORD, name: 'Maria Ortiz' })
  const draft = await (await s.request(`${API}/draft`, { headers: { cookie: c.cookie } })).json()
  t.same(draft.entries, ['posts/hello'], 'the draft survived signing out')
  t.equal((await s.request(`${API}/draft`, { headers: { cookie: b.cookie } })).status, 200, 'the other device stays signed in')

  // Hostile names map to a safe id, never a path.
  for (const name of ['../../etc/passwd', '__proto__', 'refs/heads/main', '😀', 'a\u0000b', '"><script>', '.', '-', 'x'.repeat(64)]) {
    const r = await login(s, { password: TEST_PASSWORD, name })
    t.equal(r.status, 200, JSON.stringify(name))
    t.ok(isSafeIdentityId(r.json.identity.id), `${JSON.stringify(name)} -> ${r.json.identity.id as string}`)
    t.notMatch(r.json.identity.id, /[./]/)
  }
  t.equal(editorIdForName('../../x'), editorIdForName('../../x'))
  const before = await repoFingerprint(s.repoDir)
  t.equal((await login(s, { password: TEST_PASSWORD, name: 7 })).status, 400, 'a name that is not a string')
  t.equal((await login(s, { password: TEST_PASSWORD, name: 'n'.repeat(65) })).status, 400, 'a name too long')
  t.equal((await login(s, { password: 'wrong', name: 'Maria Ortiz' })).status, 401, 'a name does not replace the password')
  t.equal(await repoFingerprint(s.repoDir), before, 'refused sign-ins write nothing')
})

t.test('x-cms-relation: an id that does not exist is 400 and writes nothing', async t => {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  const mutate = async (body: unknown): Promise<Response> => await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })
  const before = await repoFingerprint(s.repoDir)
  for (const author of ['nobody', '../authors/maria', '__proto__']) {
    const res = await mutate({ type: 'save_field', collection: 'posts', id: 'hello', field: 'author', value: author })
    t.equal(res.status, 400, author)
    t.match(await res.json(), { code: 'schema_validation', issues: [{ path: 'author', code: 'relation' }] })
  }
  const put = await mutate({ type: 'put_entry', collection: 'posts', id: 'new-one', data: { title: 'New', author: 'ghost', body: '' } })
  t.equal(put.status, 400)
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing written')
  t.equal((await mutate({ type: 'save_field', collection: 'posts', id: 'hello', field: 'author', value: 'maria' })).status, 200)
  t.match(await readFile(path.join(s.repoDir, FILE), 'utf8'), /author: maria/)
})

t.test('GET /search: every collection, grouped, with snippets; bad queries are 400', async t => {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  const res = await s.request(`${API}/search?q=bakery`, { headers: { cookie } })
  t.equal(res.status, 200)
  const body = await res.json()
  t.ok(body.groups.some((g: any) => g.collection === 'authors'), 'authors matched')
  t.ok(body.groups.some((g: any) => g.collection === 'posts'), 'posts matched too')
  const authors = body.groups.find((g: any) => g.collection === 'authors')
  t.match(authors, { total: 1, entries: [{ id: 'maria', title: 'Maria bakery fan', snippet: { text: /bakery/ } }] })
  t.equal((await s.request(`${API}/search?q=`, { headers: { cookie } })).status, 400)
  t.equal((await s.request(`${API}/search?q=a&q=b`, { headers: { cookie } })).status, 400)
  t.equal((await s.request(`${API}/search?q=${'x'.repeat(201)}`, { headers: { cookie } })).status, 400)
  t.equal((await s.request(`${API}/search?q=bakery`)).status, 401)
  t.same((await (await s.request(`${API}/search?q=zzzqqq`, { headers: { cookie } })).json()).groups, [])
})

t.test('assets and JSON over 1 KB are compressed as the client accepts', async t => {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  for (const [encoding, expected] of [['br, gzip', 'br'], ['gzip', 'gzip'], ['identity', null]] as const) {
    const res = await s.request('/__cms/editor.js', { headers: { 'accept-encoding': encoding } })
    t.equal(res.status, 200)
    t.equal(res.headers.get('content-encoding'), expected, `editor.js with ${encoding}`)
    t.match(res.headers.get('vary') ?? '', /Accept-Encoding/i)
    await res.arrayBuffer()
  }
  const studio = await s.request('/admin/assets/studio.js', { headers: { 'accept-encoding': 'gzip' } })
  t.equal(studio.headers.get('content-encoding'), 'gzip')
  t.ok((await studio.text()).length > 1024, 'fetch decodes it')
  // Studio assets are sent as the build compressed them (scripts/build-browser.mjs), not again per request.
  const dir = browserAssetDir('studio.js') as string
  const chunk = (await readdir(dir)).find(n => /^studio-markdown-editor-.+\.js$/.test(n)) as string
  const plain = await readFile(path.join(dir, chunk))
  const tags = new Set<string>()
  for (const [encoding, expected, suffix] of [['gzip, br', 'br', '.br'], ['gzip', 'gzip', '.gz'], ['identity', null, '']] as const) {
    const res = await s.request(`/admin/assets/${chunk}`, { headers: { 'accept-encoding': encoding } })
    t.equal(res.headers.get('content-encoding'), expected, `${chunk} with ${encoding}`)
    t.equal(Number(res.headers.get('content-length')), (await stat(path.join(dir, chunk + suffix))).size, 'the file the build wrote, as is')
    t.match(res.headers.get('vary') ?? '', /Accept-Encoding/i)
    t.ok(Buffer.from(await res.arrayBuffer()).equals(plain), 'decodes to the asset')
    const etag = res.headers.get('etag') ?? ''
    tags.add(etag)
    // (fetch adds `Cache-Control: no-cache`, which bypasses revalidation, unless one is given.)
    const again = await s.request(`/admin/assets/${chunk}`, { headers: { 'accept-encoding': encoding, 'if-none-match': etag, 'cache-control': 'max-age=0' } })
    t.equal(again.status, 304, `revalidated (${encoding})`)
  }
  t.equal(tags.size, 3, 'one ETag per encoding')
  const other = await s.request(`/admin/assets/${chunk}`, { headers: { 'accept-encoding': 'br', 'if-none-match': [...tags][1] as string, 'cache-control': 'max-age=0' } })
  t.equal(other.status, 200, 'the gzip ETag does not revalidate the brotli body')
  t.equal(other.headers.get('content-encoding'), 'br')
  await other.arrayBuffer()
  const small = await s.request(`${API}/auth/session`, { headers: { 'accept-encoding': 'gzip' } })
  t.equal(small.headers.get('content-encoding'), null, 'a small JSON answer is sent as it is')
  const big = await s.request(`${API}/schema?collection=posts`, { headers: { cookie, 'accept-encoding': 'gzip' } })
  const text = await big.text()
  t.equal(big.headers.get('content-encoding'), text.length > 1024 ? 'gzip' : null)
})

t.test('assets whose URL names their content are cached for good; the rest are revalidated', async t => {
  const s = await startServer(t, { config, files })
  const shell = await (await s.request('/admin/cms/posts/hello')).text()
  const js = /src="(\/admin\/assets\/studio\.js\?v=[0-9a-z]+)"/.exec(shell)?.[1]
  const css = /href="(\/admin\/assets\/studio\.css\?v=[0-9a-z]+)"/.exec(shell)?.[1]
  t.ok(js !== undefined && css !== undefined, 'the shell links studio.js and studio.css with their version')
  for (const url of [js, css]) {
    const res = await s.request(url as string)
    t.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable', url as string)
    await res.arrayBuffer()
  }
  const plain = await s.request('/admin/assets/studio.js')
  t.equal(plain.headers.get('cache-control'), 'no-cache', 'without a version: revalidated')
  await plain.arrayBuffer()
  const chunk = (await readdir(browserAssetDir('studio.js') as string)).find(n => /^studio-.+\.js$/.test(n)) as string
  const res = await s.request(`/admin/assets/${chunk}`)
  t.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable', 'a chunk: its name carries its hash')
  await res.arrayBuffer()
  const missing = await s.request('/admin/assets/studio-x.js')
  t.equal(missing.status, 404, 'a chunk that does not exist')
  await missing.arrayBuffer()
  t.equal((await s.request('/admin/assets/studio.js?v=../../etc/passwd')).headers.get('content-type'), 'text/javascript; charset=utf-8', 'the version is only a cache key')
})
