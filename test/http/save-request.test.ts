import t from 'tap'
import net from 'node:net'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { startServer, repoFingerprint, writeHeaders } from '../helpers/site.js'

const API = '/api/cms'

const config = {
  collections: {
    posts: { format: 'md' as const, schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, body: { type: 'string' } } } }
  }
}
const files = { 'content/posts/hello.md': '---\ntitle: Hello\n---\nBody\n' }

/** Sends raw HTTP/1.1 bytes and returns the status of the answer (0 when the connection closed without one). */
async function rawStatus (url: string, head: string, body: string | Buffer, endAfter = false): Promise<number> {
  const { port } = new URL(url)
  return await new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1')
    let answer = ''
    socket.on('data', (c: Buffer) => {
      answer += c.toString('latin1')
      const m = /^HTTP\/1\.1 (\d{3})/.exec(answer)
      if (m !== null) { socket.destroy(); resolve(Number(m[1])) }
    })
    socket.on('close', () => { resolve(0) })
    socket.on('error', reject)
    socket.write(head + '\r\n\r\n')
    socket.write(body)
    if (endAfter) socket.end()
  })
}

t.test('the JSON body of a save: happy path, and every refusal changes nothing', async t => {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  const post = async (body: string | Buffer, headers: Record<string, string> = {}): Promise<Response> =>
    await s.request(`${API}/mutate`, { method: 'POST', headers: { ...writeHeaders(cookie), ...headers }, body })
  const save = (value: unknown, extra: Record<string, unknown> = {}): string => JSON.stringify({ type: 'save_field', collection: 'posts', id: 'hello', field: 'title', value, ...extra })
  const file = async (): Promise<string> => await readFile(path.join(s.repoDir, 'content/posts/hello.md'), 'utf8')

  const ok = await post(save('First'))
  t.equal(ok.status, 200)
  t.match(await ok.json(), { ok: true })
  t.equal(await file(), '---\ntitle: First\n---\nBody\n')
  t.equal((await post(save('Second'), { 'content-type': 'application/json; charset=utf-8' })).status, 200, 'charset=utf-8')
  t.equal((await post(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(save('Third'))]))).status, 200, 'a byte order mark is dropped')
  t.equal((await post(' \n\t' + save('Fourth'))).status, 200, 'leading whitespace')
  t.equal((await post(save('Fifth "__proto__": not a key'))).status, 200, 'the word in a string value is fine')
  t.equal(await file(), '---\ntitle: \'Fifth "__proto__": not a key\'\n---\nBody\n')
  // A larger body, still under the 1 MiB limit.
  const big = await post(save('x'.repeat(70 * 1024)))
  t.equal(big.status, 200, '70 KiB')
  t.equal((await post(save('Back'))).status, 200)

  const before = await repoFingerprint(s.repoDir)
  const refused: Array<[string, Promise<Response>, number, string]> = [
    ['malformed', post('{"type": "save_field",'), 400, 'bad_request'],
    ['not an object or array', post('"text"'), 400, 'bad_request'],
    ['a number', post('12'), 400, 'bad_request'],
    ['an array', post('[1, 2]'), 400, 'bad_request'],
    ['trailing garbage', post(save('x') + 'x'), 400, 'bad_request'],
    ['a __proto__ key', post('{"type":"save_field","collection":"posts","id":"hello","field":"title","value":{"__proto__":{"polluted":true}}}'), 400, 'bad_request'],
    ['an escaped __proto__ key', post('{"type":"save_field","collection":"posts","id":"hello","field":"title","value":"x","\\u005f_proto__":{"polluted":true}}'), 400, 'bad_request'],
    ['a __proto__ key at the top', post('{"__proto__":{"polluted":true}}'), 400, 'bad_request'],
    ['wrong content type', post(save('x'), { 'content-type': 'text/plain' }), 415, 'unsupported_media_type'],
    ['form content type', post('type=save_field', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type'],
    ['wrong value type', post(save(5)), 400, 'schema_validation'],
    ['missing field', post(JSON.stringify({ type: 'save_field', collection: 'posts', id: 'hello', value: 'x' })), 400, 'bad_request'],
    ['hostile id', post(JSON.stringify({ type: 'save_field', collection: 'posts', id: '../hello', field: 'title', value: 'x' })), 400, 'bad_request'],
    ['hostile field', post(JSON.stringify({ type: 'save_field', collection: 'posts', id: 'hello', field: '__proto__.x', value: 'x' })), 400, 'bad_request'],
    ['oversized', post(save('x'.repeat(1024 * 1024 + 10))), 413, 'payload_too_large'],
    ['no request-forgery header', s.request(`${API}/mutate`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: save('x') }), 403, 'csrf_header_missing'],
    ['malformed cookie', s.request(`${API}/mutate`, { method: 'POST', headers: { ...writeHeaders('cms_session=a.b.c'), cookie: 'cms_session=%%%' }, body: save('x') }), 401, 'unauthorized']
  ]
  for (const [name, res, status, code] of refused) {
    const r = await res
    t.equal(r.status, status, name)
    t.match(await r.json(), { code, error: String }, name)
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution')

  // A declared length the body does not match: shorter is malformed JSON; a body that never
  // arrives in full (the client ends its side first) is refused.
  const body = save('Raw')
  const head = (length: number): string => [`POST ${API}/mutate HTTP/1.1`, 'Host: x', `Cookie: ${cookie}`, 'Content-Type: application/json', 'X-CMS-Request: 1', `Content-Length: ${length}`].join('\r\n')
  t.equal(await rawStatus(s.url, head(body.length - 5), body), 400, 'declared length shorter than the body')
  t.equal(await rawStatus(s.url, head(body.length + 50), body, true), 400, 'the client ends before its declared length')
  t.equal(await repoFingerprint(s.repoDir), before, 'files, refs and commits unchanged after every refusal')
  t.equal(await rawStatus(s.url, head(body.length), body), 200, 'control: the same raw request with its length')
})

t.test('POST /mutate keeps the guards\' order, and its other spellings route', async t => {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  const body = JSON.stringify({ type: 'save_field', collection: 'posts', id: 'hello', field: 'title', value: 'Routed' })
  const before = await repoFingerprint(s.repoDir)
  const anonymous = await s.request(`${API}/mutate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  t.equal(anonymous.status, 401, 'no session and no request-forgery header: 401 first')
  t.match(await anonymous.json(), { code: 'unauthorized' })
  t.equal(anonymous.headers.get('cache-control'), 'no-store')
  const get = await s.request(`${API}/mutate`, { headers: { cookie } })
  t.equal(get.status, 404, 'GET: no such route')
  t.equal(await repoFingerprint(s.repoDir), before)
  const slash = await s.request(`${API}/mutate/`, { method: 'POST', headers: writeHeaders(cookie), body })
  t.equal(slash.status, 200, 'a trailing slash: the same route')
  const direct = await s.request(`${API}/mutate?x=1`, { method: 'POST', headers: writeHeaders(cookie), body: body.replace('Routed', 'Direct') })
  t.equal(direct.status, 200)
  t.equal(direct.headers.get('cache-control'), 'no-store')
  t.equal(direct.headers.get('x-content-type-options'), 'nosniff')
  t.equal(await readFile(path.join(s.repoDir, 'content/posts/hello.md'), 'utf8'), '---\ntitle: Direct\n---\nBody\n')
})

t.test('a search right after a title save finds the new title and not the old one, save after save', async t => {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  const found = async (q: string): Promise<string[]> => {
    const res = await s.request(`${API}/entries?collection=posts&q=${encodeURIComponent(q)}`, { headers: { cookie } })
    t.equal(res.status, 200)
    return ((await res.json()) as { entries: Array<{ id: string }> }).entries.map(e => e.id)
  }
  t.ok((await found('body')).includes('hello'), 'the index is built')
  for (const [title, gone] of [['Quokka island', 'zzzz'], ['Wombat burrow', 'quokka'], ['Numbat', 'wombat'], ['Numbat body', 'burrow']] as const) {
    const res = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'save_field', collection: 'posts', id: 'hello', field: 'title', value: title }) })
    t.equal(res.status, 200)
    t.same(await found(title.split(' ')[0]!.toLowerCase()), ['hello'], `${title}: found at once`)
    t.same(await found(gone), [], `${title}: "${gone}" no longer matches`)
    t.ok((await found('body')).includes('hello'), `${title}: the body still matches`)
  }
})

t.test('validation on save: a stored issue never blocks, a new one is refused and writes nothing', async t => {
  const strict = { collections: { posts: { format: 'md' as const, schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, n: { type: 'integer' }, body: { type: 'string' } } } } } }
  const s = await startServer(t, { config: strict, files: { 'content/posts/odd.md': '---\ntitle: Odd\nn: not a number\n---\nBody\n' } })
  const cookie = await s.login()
  const save = async (field: string, value: unknown): Promise<Response> =>
    await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'save_field', collection: 'posts', id: 'odd', field, value }) })
  t.equal((await save('title', 'Still odd')).status, 200, 'the stored issue does not block another field')
  t.equal((await save('n', 'still not a number')).status, 200, 'nor the same issue again')
  const before = await repoFingerprint(s.repoDir)
  const refused = await save('title', 5)
  t.equal(refused.status, 400)
  t.match(await refused.json(), { code: 'schema_validation', issues: [{ path: String }] })
  t.equal(await repoFingerprint(s.repoDir), before, 'nothing written')
  t.equal((await save('n', 3)).status, 200, 'and fixing it is fine')
  t.equal(await readFile(path.join(s.repoDir, 'content/posts/odd.md'), 'utf8'), '---\ntitle: Still odd\nn: 3\n---\nBody\n')
})
