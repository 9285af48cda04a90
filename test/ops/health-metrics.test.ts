import t from 'tap'
import { rename } from 'node:fs/promises'
import path from 'node:path'
import { makeSite, startServer, writeHeaders, type TestServer } from '../helpers/site.js'
import { normalizeConfig } from '../../lib/config.js'

const ID = 'zebra-secret-entry'
const TITLE = 'Quokka Unique Title'
const TOKEN = 'metrics-token-0123456789'
const files = {
  'cms.config.yaml': `collections:\n  notes:\n    format: json\nmetrics:\n  enabled: true\n  token: ${TOKEN}\n`,
  [`content/notes/${ID}.json`]: JSON.stringify({ title: TITLE, n: 0 }) + '\n'
}

/** The samples of a Prometheus text exposition: name, labels, value (comments skipped). */
function samples (text: string): Array<{ name: string, labels: Record<string, string>, value: number }> {
  const out: Array<{ name: string, labels: Record<string, string>, value: number }> = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (m === null) throw new Error(`not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!
    out.push({ name: m[1]!, labels, value: Number(m[3]) })
  }
  return out
}

const scrape = async (s: TestServer, token: string | null = TOKEN): Promise<Response> => await s.request('/metrics', token === null ? {} : { headers: { authorization: `Bearer ${token}` } })

t.test('healthz and readyz: no session, no content, readiness follows the repository', async t => {
  const s = await startServer(t, { repoDir: await makeSite(t, files, { fixtures: false }) })
  const health = await s.request('/healthz')
  t.equal(health.status, 200)
  t.same(await health.json(), { ok: true })
  t.equal(health.headers.get('cache-control'), 'no-store')
  await s.cms.ready
  const ready = await s.request('/readyz')
  t.equal(ready.status, 200)
  t.same(await ready.json(), { ok: true })
  t.equal((await s.request('/healthz', { method: 'POST' })).status, 405)
  t.equal((await s.request('/api/cms/healthz')).status, 401, 'not under apiBasePath')

  // An unreadable repository (HEAD gone): not ready, with the reason and nothing else.
  const head = path.join(s.repoDir, '.git', 'HEAD')
  await rename(head, head + '.away')
  const down = await s.request('/readyz')
  t.equal(down.status, 503)
  const body = await down.json() as { ok: boolean, reason: string }
  t.same(Object.keys(body).sort(), ['ok', 'reason'])
  t.equal(body.ok, false)
  t.match(body.reason, /repository/)
  t.equal((await s.request('/healthz')).status, 200, 'still alive')
  await rename(head + '.away', head)
  t.equal((await s.request('/readyz')).status, 200)
})

t.test('metrics: off by default', async t => {
  const s = await startServer(t, { repoDir: await makeSite(t, { ...files, 'cms.config.yaml': 'collections:\n  notes:\n    format: json\n' }, { fixtures: false }) })
  t.equal((await s.request('/metrics')).status, 404)
  t.equal(s.cms.config.metrics.enabled, false)
  t.throws(() => normalizeConfig({ metrics: { enabled: 'yes' } }), /metrics\.enabled/)
  t.throws(() => normalizeConfig({ metrics: { token: 'short' } }), /metrics\.token/)
  t.throws(() => normalizeConfig({ metrics: { enabled: true, path: '/x' } }), /metrics\.path.*not a known key/)
})

t.test('metrics: bearer token, route patterns, saves, conflicts, no ids or titles', async t => {
  const s = await startServer(t, { repoDir: await makeSite(t, files, { fixtures: false }) })
  t.equal((s.cms.config.metrics as { token?: unknown }).token, undefined, 'the token is left out of the public config')
  t.equal((await scrape(s, null)).status, 401)
  const wrong = await scrape(s, 'metrics-token-wrong-value')
  t.equal(wrong.status, 401)
  t.match(wrong.headers.get('www-authenticate'), /Bearer/)

  const cookie = await s.login()
  const list = await s.request(`/api/cms/entries?collection=notes&q=${encodeURIComponent(TITLE)}`, { headers: { cookie } })
  t.equal(list.status, 200)
  const mutate = async (body: unknown): Promise<number> => (await s.request('/api/cms/mutate', { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })).status
  t.equal(await mutate({ type: 'save_field', collection: 'notes', id: ID, field: 'n', value: 1 }), 200)
  t.equal(await mutate({ type: 'save_field', collection: 'notes', id: ID, field: 'n', value: 2, expectedRevision: 999 }), 409)
  t.equal((await s.request(`/admin/${ID}`)).status >= 200, true)
  t.equal((await s.request(`/nowhere/${ID}`)).status, 404)

  const res = await scrape(s)
  t.equal(res.status, 200)
  t.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/)
  const text = await res.text()
  t.notOk(text.includes(ID), 'no entry id in the metrics')
  t.notOk(text.includes('Quokka'), 'no title in the metrics')
  t.notOk(text.includes('Editor'), 'no editor name in the metrics')
  const all = samples(text)
  const value = (name: string, labels: Record<string, string> = {}): number => all
    .filter(x => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v))
    .reduce((sum, x) => sum + x.value, 0)
  t.equal(value('cms_http_requests_total', { route: '/api/cms/entries', method: 'GET', status: '200' }), 1)
  t.equal(value('cms_http_requests_total', { route: '/api/cms/mutate', status: '200' }), 1)
  t.equal(value('cms_http_requests_total', { route: '/api/cms/mutate', status: '409' }), 1)
  t.equal(value('cms_http_requests_total', { route: 'other', status: '404' }), 1)
  t.equal(value('cms_http_request_duration_seconds_count', { route: '/api/cms/mutate' }), 2)
  t.equal(value('cms_saves_total'), 1)
  t.equal(value('cms_conflicts_total', { route: '/api/cms/mutate' }), 1)
  t.equal(value('cms_publishes_total'), 0)
  t.equal(value('cms_sync_lag_seconds'), -1, 'no remote')
  t.ok(value('cms_index_builds_total') >= 1, 'index builds counted')
  t.ok(all.some(x => x.name === 'process_cpu_user_seconds_total'), 'process metrics')
  t.ok(all.some(x => x.name === 'nodejs_eventloop_lag_p99_seconds'), 'event loop metrics')
  for (const x of all) for (const v of Object.values(x.labels)) t.notOk(v.includes(ID), `label ${x.name} holds no id`)

  // A second instance in the same process counts on its own.
  const other = await startServer(t, { repoDir: await makeSite(t, files, { fixtures: false }) })
  const fresh = samples(await (await scrape(other)).text())
  t.equal(fresh.filter(x => x.name === 'cms_saves_total').reduce((a, x) => a + x.value, 0), 0)
})
