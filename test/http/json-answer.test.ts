import t, { type Test } from 'tap'
import Koa from 'koa'
import { startServer, writeHeaders, listenOnLoopback } from '../helpers/site.js'

// The error handler turns every object body into its JSON text and sets the status and type only
// when they changed (issue 18, eleventh pass): each answer keeps its status, the JSON type and a
// length matching its body (or, over 1 KB, a compressed body).

const API = '/api/cms'
const JSON_TYPE = 'application/json; charset=utf-8'

async function check (t: Test, res: Response, status: number, body: unknown, what: string): Promise<void> {
  const text = await res.text()
  t.equal(res.status, status, `${what}: status`)
  t.equal(res.headers.get('content-type'), JSON_TYPE, `${what}: type`)
  // Answers over 1 KB are compressed (CONTRACT 16): their length is the compressed one, sent chunked.
  if (res.headers.get('content-encoding') === null) t.equal(res.headers.get('content-length'), String(Buffer.byteLength(text)), `${what}: length`)
  else t.ok(Buffer.byteLength(text) > 1024 && ['br', 'gzip'].includes(res.headers.get('content-encoding') ?? ''), `${what}: over 1 KB, compressed`)
  t.match(JSON.parse(text), body, `${what}: body`)
}

t.test('JSON answers keep their status, the JSON type and their length', async t => {
  const srv = await startServer(t, { files: { 'content/posts/a.md': '---\ntitle: A\n---\nBody\n' } })
  const cookie = await srv.login()
  const save = async (body: unknown): Promise<Response> => await srv.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })
  await check(t, await save({ type: 'save_field', collection: 'posts', id: 'a', field: 'title', value: 'B' }), 200, { ok: true, revision: Number }, 'a save')
  await check(t, await save({ type: 'save_field', collection: 'posts', id: 'a', field: 'title', value: 'C', expectedRevision: 1 }), 409, { code: String }, 'a stale revision')
  await check(t, await save({ type: 'save_field', collection: 'posts', id: '../x', field: 'title', value: 'C' }), 400, { code: 'bad_request' }, 'a hostile id')
  await check(t, await save({ type: 'save_field', collection: 'posts', id: 'nope', field: 'title', value: 'C' }), 404, { code: String }, 'a missing entry')
  await check(t, await srv.request(`${API}/mutate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }), 401, { code: 'unauthorized' }, 'no session')
  await check(t, await srv.request(`${API}/entries?collection=posts`, { headers: { cookie } }), 200, { entries: Array }, 'a list')

  // An application behind the service's middleware: its object bodies are answered the same way.
  const app = new Koa()
  app.use(srv.cms.middleware())
  app.use(async (ctx) => {
    if (ctx.path === '/created') { ctx.status = 201; ctx.body = { made: true } }
    if (ctx.path === '/problem') { ctx.status = 422; ctx.type = 'application/problem+json'; ctx.body = { title: 'x' } }
    if (ctx.path === '/list') ctx.body = [1, 2]
  })
  const { origin } = await listenOnLoopback(t, app.callback())
  await check(t, await fetch(`${origin}/created`), 201, { made: true }, 'a 201')
  await check(t, await fetch(`${origin}/problem`), 422, { title: 'x' }, 'another JSON type')
  await check(t, await fetch(`${origin}/list`), 200, [1, 2], 'an array')
})
