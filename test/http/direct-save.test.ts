import t from 'tap'
import net from 'node:net'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { startServer, repoFingerprint, writeHeaders, listenOnLoopback } from '../helpers/site.js'
import { withDirectSave, type RequestListener } from '../../lib/http/direct-save.js'

const API = '/api/cms'

const config = {
  collections: {
    posts: { format: 'md' as const, schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, body: { type: 'string' } } } }
  }
}
const files = { 'content/posts/hello.md': '---\ntitle: Hello\n---\nBody\n', 'content/posts/other.md': '---\ntitle: Other\n---\nText\n' }
const save = (extra: Record<string, unknown> = {}): string => JSON.stringify({ type: 'save_field', collection: 'posts', id: 'hello', field: 'title', value: 'x', ...extra })

/** The answer's parts that must be the same from the direct route and from Koa's (no Date, no connection headers). */
async function answerOf (res: Response): Promise<{ status: number, body: unknown, headers: Record<string, string | null> }> {
  const headers: Record<string, string | null> = {}
  for (const name of ['content-type', 'content-length', 'cache-control', 'x-content-type-options', 'www-authenticate', 'retry-after', 'access-control-allow-credentials']) headers[name] = res.headers.get(name)
  return { status: res.status, body: await res.json(), headers }
}

/** Sends raw HTTP/1.1 bytes and returns the answer's status line and body (the connection then closed). */
async function raw (port: number, head: string, body: string, endAfter = false): Promise<string> {
  return await new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let answer = ''
    socket.on('data', (c: Buffer) => {
      answer += c.toString('latin1')
      const m = /\r\n\r\n([\s\S]*)$/.exec(answer)
      const length = /content-length: (\d+)/i.exec(answer)
      if (m !== null && length !== null && Buffer.byteLength(m[1]!, 'latin1') >= Number(length[1])) { socket.destroy(); resolve(answer) }
    })
    socket.on('close', () => { resolve(answer) })
    socket.on('error', reject)
    socket.write(head + '\r\n\r\n')
    socket.write(body)
    if (endAfter) socket.end()
  })
}

t.test('the direct save route gives the answer the Koa route gives, refusals included, and changes nothing when refusing', async t => {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  // `?via=koa` makes Koa serve the same route (the direct listener takes the exact path only).
  const both = async (init: RequestInit): Promise<[Awaited<ReturnType<typeof answerOf>>, Awaited<ReturnType<typeof answerOf>>]> => {
    const direct = await answerOf(await s.request(`${API}/mutate`, { method: 'POST', ...init }))
    const koa = await answerOf(await s.request(`${API}/mutate?via=koa`, { method: 'POST', ...init }))
    return [direct, koa]
  }
  const before = await repoFingerprint(s.repoDir)
  const refusals: Array<[string, RequestInit, number, string]> = [
    ['no session', { headers: { 'content-type': 'application/json', 'x-cms-request': '1' }, body: save() }, 401, 'unauthorized'],
    ['malformed cookie', { headers: { ...writeHeaders('cms_session=%%%;;=') }, body: save() }, 401, 'unauthorized'],
    ['forged cookie', { headers: { ...writeHeaders(cookie.replace(/.$/, c => c === 'A' ? 'B' : 'A')) }, body: save() }, 401, 'unauthorized'],
    ['no request-forgery header', { headers: { cookie, 'content-type': 'application/json' }, body: save() }, 403, 'csrf_header_missing'],
    ['request-forgery header not 1', { headers: { ...writeHeaders(cookie), 'x-cms-request': 'yes' }, body: save() }, 403, 'csrf_header_missing'],
    ['hostile id ../x', { headers: writeHeaders(cookie), body: save({ id: '../x' }) }, 400, 'bad_request'],
    ['hostile id ../hello', { headers: writeHeaders(cookie), body: save({ id: '../hello' }) }, 400, 'bad_request'],
    ['id __proto__', { headers: writeHeaders(cookie), body: save({ id: '__proto__' }) }, 400, 'bad_request'],
    ['collection __proto__', { headers: writeHeaders(cookie), body: save({ collection: '__proto__' }) }, 400, 'bad_request'],
    ['field __proto__', { headers: writeHeaders(cookie), body: save({ field: '__proto__.polluted' }) }, 400, 'bad_request'],
    ['a __proto__ key', { headers: writeHeaders(cookie), body: '{"type":"save_field","collection":"posts","id":"hello","field":"title","value":{"__proto__":{"polluted":true}}}' }, 400, 'bad_request'],
    ['wrong value type', { headers: writeHeaders(cookie), body: save({ value: 5 }) }, 400, 'schema_validation'],
    ['wrong id type', { headers: writeHeaders(cookie), body: save({ id: 5 }) }, 400, 'bad_request'],
    ['unknown command', { headers: writeHeaders(cookie), body: save({ type: 'drop_everything' }) }, 400, 'bad_request'],
    ['an unknown member', { headers: writeHeaders(cookie), body: save({ extra: true }) }, 400, 'bad_request'],
    ['an array', { headers: writeHeaders(cookie), body: '[1]' }, 400, 'bad_request'],
    ['malformed JSON', { headers: writeHeaders(cookie), body: '{"type":' }, 400, 'bad_request'],
    ['no such entry', { headers: writeHeaders(cookie), body: save({ id: 'nope' }) }, 404, 'not_found'],
    ['revision conflict', { headers: writeHeaders(cookie), body: save({ expectedRevision: 99 }) }, 409, 'revision_conflict'],
    ['oversized (koa-body on both)', { headers: writeHeaders(cookie), body: save({ value: 'x'.repeat(1024 * 1024 + 10) }) }, 413, 'payload_too_large'],
    ['text/plain (koa-body on both)', { headers: { ...writeHeaders(cookie), 'content-type': 'text/plain' }, body: save() }, 415, 'unsupported_media_type']
  ]
  for (const [name, init, status, code] of refusals) {
    const [direct, koa] = await both(init)
    t.equal(direct.status, status, `${name}: status`)
    t.match(direct.body, { code, error: String }, `${name}: body`)
    t.same(direct, koa, `${name}: the same answer as Koa's`)
    t.equal(await repoFingerprint(s.repoDir), before, `${name}: files, refs and commits unchanged`)
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype pollution')

  // A body that does not match its declared length (only a raw socket sends one).
  const port = Number(new URL(s.url).port)
  const body = save({ value: 'Raw' })
  const head = (p: string, length: number): string => [`POST ${p} HTTP/1.1`, 'Host: x', `Cookie: ${cookie}`, 'Content-Type: application/json', 'X-CMS-Request: 1', `Content-Length: ${length}`].join('\r\n')
  for (const p of [`${API}/mutate`, `${API}/mutate?via=koa`]) {
    t.match(await raw(port, head(p, body.length - 5), body), /^HTTP\/1\.1 400 /, `${p}: declared length shorter than the body`)
    t.match(await raw(port, head(p, body.length + 50), body, true), /^(HTTP\/1\.1 400 |$)/, `${p}: the client ends before its declared length`)
  }
  t.equal(await repoFingerprint(s.repoDir), before, 'unchanged after the raw requests')

  // The happy path: the same answer shape, the file written, the history kept.
  const ok = await answerOf(await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: save({ value: 'Direct' }) }))
  const viaKoa = await answerOf(await s.request(`${API}/mutate?via=koa`, { method: 'POST', headers: writeHeaders(cookie), body: save({ id: 'other', value: 'Routed' }) }))
  t.same(ok, viaKoa, 'a save: the same answer (status, body, headers)')
  t.same(ok.body, { ok: true, revision: 2 })
  t.equal(await readFile(path.join(s.repoDir, 'content/posts/hello.md'), 'utf8'), '---\ntitle: Direct\n---\nBody\n')
  const history = await s.request(`${API}/history?collection=posts&id=hello`, { headers: { cookie } })
  t.match(await history.json(), { history: [{ action: 'save', data: { title: 'Hello' } }] }, 'the replaced state is in the history')
})

t.test('the direct listener takes the plain save only; every other request reaches the app untouched', async t => {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  const reached: string[] = []
  const app: RequestListener = async (req, res) => {
    // Records what reached the app, reading nothing of the body.
    reached.push(`${req.method ?? ''} ${req.url ?? ''}`)
    ;(res as ServerResponse).statusCode = 599
    ;(res as ServerResponse).end()
    ;(req as IncomingMessage).resume()
  }
  const { origin } = await listenOnLoopback(t, withDirectSave(s.services, app))
  const post = async (p: string, headers: Record<string, string>, body: string, method = 'POST'): Promise<number> =>
    (await fetch(origin + p, { method, headers, body })).status
  const before = await repoFingerprint(s.repoDir)
  t.equal(await post(`${API}/mutate?x=1`, writeHeaders(cookie), save()), 599, 'a query string')
  t.equal(await post(`${API}/mutate/`, writeHeaders(cookie), save()), 599, 'a trailing slash')
  t.equal(await post(`${API}/Mutate`, writeHeaders(cookie), save()), 599, 'another case')
  t.equal(await post(`${API}/mutate`, writeHeaders(cookie), save(), 'PUT'), 599, 'PUT')
  t.equal(await post(`${API}/mutate`, { ...writeHeaders(cookie), 'content-type': 'text/plain' }, save()), 599, 'another content type')
  t.equal(await post(`${API}/mutate`, writeHeaders(cookie), save({ value: 'x'.repeat(70 * 1024) })), 599, 'a body over 64 KiB')
  t.equal(await post(`${API}/mutate`, { ...writeHeaders(cookie), 'content-encoding': 'gzip' }, save()), 599, 'a content encoding')
  t.equal(await post(`${API}/entries`, writeHeaders(cookie), save()), 599, 'another route')
  t.equal(reached.length, 8, 'each of them reached the app')
  t.equal(await repoFingerprint(s.repoDir), before, 'and nothing was written')
  t.equal(await post(`${API}/mutate`, writeHeaders(cookie), save()), 200, 'the plain save is served directly')
  t.equal(reached.length, 8, 'without reaching the app')
  t.equal(await post(`${API}/mutate`, { cookie, 'content-type': 'application/json' }, save({ value: 'y' })), 403, 'its refusals too')
  t.equal(reached.length, 8)
  t.equal(await readFile(path.join(s.repoDir, 'content/posts/hello.md'), 'utf8'), '---\ntitle: x\n---\nBody\n')
})
