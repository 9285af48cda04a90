import t from 'tap'
import { pino } from 'pino'
import Koa from 'koa'
import { startServer, writeHeaders, listenOnLoopback } from '../helpers/site.js'

const API = '/api/cms'

t.test('a body Koa could not serialize is a logged JSON 500, not a silent plain-text one', async t => {
  const lines: string[] = []
  const logger = pino({ level: 'error' }, { write: (s: string) => { lines.push(s) } })
  const srv = await startServer(t, { logger })
  // Content can no longer produce such a body (data nested past 64 levels is unreadable), so an
  // application mounted behind the service's middleware answers with one JSON cannot hold.
  const app = new Koa()
  app.use(srv.cms.middleware())
  app.use(async (ctx) => { if (ctx.path === '/broken') ctx.body = { n: 1n } })
  const { origin } = await listenOnLoopback(t, app.callback())
  const res = await fetch(`${origin}/broken`)
  t.equal(res.status, 500)
  t.match(res.headers.get('content-type') ?? '', /application\/json/)
  t.same(await res.json(), { error: 'Internal server error', code: 'internal' })
  t.ok(lines.some(l => /"stack"/.test(l)), 'the 500 is logged with its stack')
})

t.test('every JSON error body carries its stable code; the three 409s are told apart', async t => {
  const srv = await startServer(t)
  const noAuth = await srv.request(`${API}/entries?collection=posts`)
  t.match(await noAuth.json(), { code: 'unauthorized', error: String })
  const cookie = await srv.login()
  const noCsrf = await srv.request(`${API}/mutate`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: '{}' })
  t.match(await noCsrf.json(), { code: 'csrf_header_missing', detail: String })
  const malformed = await srv.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: '{' })
  t.equal(malformed.status, 400)
  t.match(await malformed.json(), { code: 'bad_request' })
  const wrongType = await srv.request(`${API}/mutate`, { method: 'POST', headers: { ...writeHeaders(cookie), 'content-type': 'text/plain' }, body: '{}' })
  t.equal(wrongType.status, 415)
  t.match(await wrongType.json(), { code: 'unsupported_media_type' })
  const tooLarge = await srv.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'put_entry', pad: 'x'.repeat(1_100_000) }) })
  t.equal(tooLarge.status, 413)
  t.match(await tooLarge.json(), { code: 'payload_too_large' })
  const missing = await srv.request(`${API}/entries?collection=posts&id=nope`, { headers: { cookie } })
  t.equal(missing.status, 404)
  t.match(await missing.json(), { code: 'not_found' })

  const mutate = async (cmd: Record<string, unknown>): Promise<Response> =>
    await srv.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(cmd) })
  const revConflict = await mutate({ type: 'save_field', collection: 'authors', id: 'maria', field: 'name', value: 'M', expectedRevision: 99 })
  t.equal(revConflict.status, 409)
  t.match(await revConflict.json(), { code: 'revision_conflict', error: 'Revision conflict', currentRevision: Number })
  const exists = await mutate({ type: 'create_collection', collection: 'authors', schema: { type: 'object' } })
  t.equal(exists.status, 409)
  t.match(await exists.json(), { code: 'conflict' })
  const stale = await mutate({ type: 'md_block', collection: 'posts', id: 'hello-world', blockPath: 'body', src: '0:5:0000000000000000', html: 'x' })
  t.equal(stale.status, 409)
  t.match(await stale.json(), { code: 'stale_source', currentRevision: Number })
  const invalid = await mutate({ type: 'save_field', collection: 'authors', id: 'maria', field: 'name', value: 42 })
  t.equal(invalid.status, 400)
  t.match(await invalid.json(), { code: 'schema_validation', issues: Array })
})
