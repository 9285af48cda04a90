import t from 'tap'
import { repoFingerprint, startServer, writeHeaders } from '../helpers/site.js'

const API = '/api/cms'

/** The JSON text of an object nested `levels` deep (the outermost object is level 1). */
function nested (levels: number): string {
  return '{"child":'.repeat(levels - 1) + '{"leaf":"x"}' + '}'.repeat(levels - 1)
}

/** A command's JSON text with raw JSON (`nested`) spliced in for `$raw`. */
function command (cmd: Record<string, unknown>, raw: string): string {
  return JSON.stringify(cmd).replace('"$raw"', raw)
}

t.test('data nested beyond 64 levels is refused with 400 and nothing is written', async t => {
  const srv = await startServer(t)
  const cookie = await srv.login()
  const mutate = async (cmd: Record<string, unknown> | string): Promise<Response> =>
    await srv.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: typeof cmd === 'string' ? cmd : JSON.stringify(cmd) })
  const before = await repoFingerprint(srv.repoDir)
  const refused: Array<[string, string]> = [
    ['put_entry 65 levels', command({ type: 'put_entry', collection: 'snippets', id: 'deep', data: '$raw' }, nested(65))],
    ['put_entry 3,000 levels', command({ type: 'put_entry', collection: 'snippets', id: 'deep', data: '$raw' }, nested(3000))],
    ['put_entry 5,000 levels', command({ type: 'put_entry', collection: 'snippets', id: 'footer', data: '$raw' }, nested(5000))],
    ['save_field value', command({ type: 'save_field', collection: 'snippets', id: 'footer', field: 'extra', value: '$raw' }, nested(64))],
    ['save_field deep path', JSON.stringify({ type: 'save_field', collection: 'snippets', id: 'footer', field: Array.from({ length: 64 }, (_, i) => `k${i}`).join('.'), value: { a: 1 } })],
    ['update_page_layout', command({ type: 'update_page_layout', collection: 'pages', id: 'home', layout: ['$raw'] }, nested(3000))]
  ]
  for (const [name, cmd] of refused) {
    const res = await mutate(cmd)
    t.equal(res.status, 400, name)
    const body = await res.json() as { code: string, error: string }
    t.equal(body.code, 'bad_request', name)
    t.match(body.error, /nested/, name)
  }
  t.equal(await repoFingerprint(srv.repoDir), before, 'no file, ref or commit changed')
  t.equal((await srv.request(`${API}/entries?collection=snippets&id=deep`, { headers: { cookie } })).status, 404)
  // 64 levels are fine, and later saves of the entry still work.
  t.equal((await mutate(command({ type: 'put_entry', collection: 'snippets', id: 'deep', data: '$raw' }, nested(64)))).status, 200)
  t.equal((await mutate({ type: 'save_field', collection: 'snippets', id: 'deep', field: 'leafy', value: 'y' })).status, 200)
})

t.test('committed content nested beyond 64 levels is an unreadable entry, never a 500', async t => {
  const flow = (levels: number): string => '['.repeat(levels) + '1' + ']'.repeat(levels)
  const srv = await startServer(t, {
    files: {
      'content/snippets/deep-json.json': nested(20000) + '\n',
      'content/snippets/deep-yaml.json': nested(65) + '\n',
      'content/data/deep.yaml': `list: ${flow(5000)}\n`,
      'content/data/ok.yaml': 'title: fine\n',
      'content/posts/deep-front.md': `---\ntitle: x\nnest: ${flow(3000)}\n---\nBody\n`
    }
  })
  const cookie = await srv.login()
  for (const [collection, id] of [['snippets', 'deep-json'], ['snippets', 'deep-yaml'], ['data', 'deep'], ['posts', 'deep-front']] as const) {
    const list = await srv.request(`${API}/entries?collection=${collection}&pageSize=100`, { headers: { cookie } })
    t.equal(list.status, 200, `${collection}: the list answers`)
    const entry = (await list.json() as { entries: Array<{ id: string, readError?: { message: string }, data?: unknown }> }).entries.find(e => e.id === id)
    t.match(entry?.readError?.message, /nested deeper than 64 levels|too deep|nest/i, `${collection}/${id} is listed unreadable`)
    t.equal(entry?.data, undefined, `${collection}/${id} has no data`)
    const read = await srv.request(`${API}/entries?collection=${collection}&id=${id}`, { headers: { cookie } })
    t.equal(read.status, 422, `${collection}/${id}: a direct read is 422`)
    t.equal((await read.json() as { code: string }).code, 'unreadable_entry')
  }
  const ok = await srv.request(`${API}/entries?collection=data&id=ok`, { headers: { cookie } })
  t.equal(ok.status, 200, 'other entries still read')
})
