import t, { type Test } from 'tap'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { startServer, repoFingerprint, writeHeaders, git } from '../helpers/site.js'

const API = '/api/cms'
const config = {
  collections: {
    posts: { format: 'md' as const, schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, body: { type: 'string' } } } },
    notes: { format: 'json' as const }
  }
}
const files = {
  'content/posts/hello.md': '---\ntitle: Hello\n---\nFirst body.\n',
  'content/notes/a.json': '{"n":0}\n'
}

async function setup (t: Test) {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  const mutate = async (body: unknown): Promise<Response> => await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })
  const history = async (c: string, id: string): Promise<any> => await (await s.request(`${API}/history?collection=${c}&id=${id}`, { headers: { cookie } })).json()
  const restore = async (body: unknown): Promise<Response> => await s.request(`${API}/history`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })
  return { s, cookie, mutate, history, restore }
}

t.test('each write records the replaced state with action, editor and increasing ts; the working tree never shows history', async t => {
  const { s, mutate, history } = await setup(t)
  t.equal((await mutate({ type: 'save_field', collection: 'posts', id: 'hello', field: 'title', value: 'Hello 2' })).status, 200)
  t.equal((await mutate({ type: 'put_entry', collection: 'posts', id: 'hello', data: { title: 'Hello 3', body: 'Second body.\n' } })).status, 200)
  const { history: h } = await history('posts', 'hello')
  t.same(h.map((x: any) => x.action), ['save', 'put'])
  t.same(h[0].data, { title: 'Hello', body: 'First body.\n' })
  t.same(h[1].data, { title: 'Hello 2', body: 'First body.\n' })
  t.equal(h[0].editor.name, 'Editor')
  t.match(h[0].editor.id, /^[A-Za-z0-9_-]{1,64}$/)
  t.ok(h[1].ts > h[0].ts, 'ts strictly increasing')
  t.match(git(s.repoDir, 'status', '--porcelain'), /content\/posts\/hello\.md/)
  t.notMatch(git(s.repoDir, 'status', '--porcelain', '--untracked-files=all'), /history|refs/)
  // The history journal is folded into the ref in the background (within the fold interval).
  const onRef = (): string => { try { return git(s.repoDir, 'log', '--format=%s', 'refs/cms/history') } catch { return '' } }
  for (const until = Date.now() + 5000; onRef() === '' && Date.now() < until;) await new Promise(resolve => setTimeout(resolve, 20))
  t.match(onRef(), /\S/)
  t.equal(git(s.repoDir, 'fsck', '--no-progress').includes('error'), false)
})

t.test('restore writes the snapshot, records the replaced state as restore, unknown ts is 404', async t => {
  const { s, mutate, history, restore } = await setup(t)
  await mutate({ type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 1 })
  await mutate({ type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 2 })
  const before = (await history('notes', 'a')).history
  const first = before[0]
  t.same(first.data, { n: 0 })
  const res = await restore({ collection: 'notes', id: 'a', ts: first.ts })
  t.equal(res.status, 200)
  const body = await res.json()
  t.equal(body.ok, true)
  t.equal(body.revision, 4)
  t.equal(await readFile(path.join(s.repoDir, 'content/notes/a.json'), 'utf8'), '{"n":0}\n', 'restored in the file\'s own compact style')
  const after = (await history('notes', 'a')).history
  t.same(after.map((x: any) => x.action), ['save', 'save', 'restore'])
  t.same(after[2].data, { n: 2 })

  const fp = await repoFingerprint(s.repoDir)
  t.equal((await restore({ collection: 'notes', id: 'a', ts: 12345 })).status, 404)
  t.equal((await restore({ collection: 'notes', id: 'a', ts: 'x' })).status, 400)
  t.equal((await restore({ collection: '../x', id: 'a', ts: first.ts })).status, 400)
  t.equal((await restore({ collection: 'notes', id: '__proto__', ts: first.ts })).status, 400)
  t.equal((await restore({ collection: 'notes', id: 'a' })).status, 400)
  t.equal(await repoFingerprint(s.repoDir), fp, 'refused restores change nothing')
})

t.test('a deleted entry keeps its history and a restore brings it back', async t => {
  const { s, mutate, history, restore } = await setup(t)
  t.equal((await mutate({ type: 'delete_entry', collection: 'posts', id: 'hello' })).status, 200)
  const { history: h } = await history('posts', 'hello')
  t.same(h.map((x: any) => x.action), ['delete'])
  t.equal((await restore({ collection: 'posts', id: 'hello', ts: h[0].ts })).status, 200)
  t.equal(await readFile(path.join(s.repoDir, 'content/posts/hello.md'), 'utf8'), '---\ntitle: Hello\n---\nFirst body.\n')
})

t.test('at most 50 snapshots per entry: the 51st drops the oldest', async t => {
  const { mutate, history } = await setup(t)
  for (let i = 1; i <= 51; i++) {
    t.equal((await mutate({ type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: i })).status, 200)
  }
  const { history: h } = await history('notes', 'a')
  t.equal(h.length, 50)
  t.same(h[0].data, { n: 1 }, 'the oldest (n: 0) was dropped')
  t.same(h[49].data, { n: 50 })
  for (let i = 1; i < h.length; i++) t.ok(h[i].ts > h[i - 1].ts)
})

t.test('history of a Markdown publish snapshot restores prose and frontmatter together', async t => {
  const s = await startServer(t, { config: { ...config, permissions: { editor: ['*'] } }, files })
  const cookie = await s.login()
  const post = async (p: string, body: unknown): Promise<Response> => await s.request(`${API}${p}`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })
  t.equal((await post('/mutate', { type: 'put_entry', collection: 'posts', id: 'hello', data: { title: 'Changed', body: 'Changed body.\n' } })).status, 200)
  const pub = await (await post('/publish', {})).json()
  t.equal(pub.published.length, 1)
  const { history: h } = await (await s.request(`${API}/history?collection=posts&id=hello`, { headers: { cookie } })).json()
  t.equal(h.at(-1).action, 'publish')
  t.equal(h.at(-1).bodySource, 'First body.\n')
  t.equal((await post('/history', { collection: 'posts', id: 'hello', ts: h.at(-1).ts })).status, 200)
  t.equal(await readFile(path.join(s.repoDir, 'content/posts/hello.md'), 'utf8'), '---\ntitle: Hello\n---\nFirst body.\n')
  const after = (await (await s.request(`${API}/history?collection=posts&id=hello`, { headers: { cookie } })).json()).history
  t.equal(after.at(-1).action, 'restore')
  t.equal(after.at(-1).bodySource, 'Changed body.\n')
})

t.test('delete_collection removes the collection history', async t => {
  const { s, mutate, history } = await setup(t)
  t.equal((await mutate({ type: 'create_collection', collection: 'faq', schema: { type: 'object' } })).status, 200)
  t.equal((await mutate({ type: 'put_entry', collection: 'faq', id: 'q1', data: { q: 'a' } })).status, 200)
  t.equal((await mutate({ type: 'put_entry', collection: 'faq', id: 'q1', data: { q: 'b' } })).status, 200)
  t.equal((await history('faq', 'q1')).history.length, 1)
  t.equal((await mutate({ type: 'delete_collection', collection: 'faq' })).status, 200)
  t.notMatch(git(s.repoDir, 'ls-tree', '-r', '--name-only', 'refs/cms/history'), /faq\//)
})
