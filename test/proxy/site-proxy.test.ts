/**
 * `git-cms serve --proxy <url>` in front of a real `hugo server` (Debian's hugo, on a free port,
 * serving test/fixtures/proxy-site/), and in front of a small Node upstream that shows what reaches
 * it (method, body, headers, cookies), redirects to its own origin and sends gzip.
 */
import t, { type Test } from 'tap'
import http, { createServer, type Server } from 'node:http'
import { gzipSync } from 'node:zlib'
import { mkdir, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { openCms } from '../../lib/cms.js'
import { siteMiddleware } from '../../lib/http/site-proxy.js'
import { silentLogger, TEST_PASSWORD, TEST_SECRET, makeSite } from '../helpers/site.js'
import { loginAt } from '../helpers/spawn-server.js'
import { buildProxySite, hasHugo, startHugoServer, spawnServe, TAG, withoutTag } from '../helpers/proxy-site.js'

async function listen (t: Test, server: Server): Promise<string> {
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => { server.closeAllConnections(); await new Promise(resolve => server.close(resolve)) })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

if (!hasHugo()) {
  t.comment('Debian hugo is not installed at /usr/bin/hugo: the hugo server tests are skipped')
} else {
  t.test('in front of hugo server', async t => {
    const site = await buildProxySite(t)
    // Files the dev server would serve at git-cms's own paths.
    for (const own of ['static/admin/index.html', 'static/__cms/bootstrap.js']) {
      await mkdir(path.dirname(path.join(site.repoDir, own)), { recursive: true })
      await writeFile(path.join(site.repoDir, own), 'SHADOW')
    }
    const hugo = await startHugoServer(t, site.repoDir)
    const server = await spawnServe(t, ['--repo', site.repoDir, '--proxy', hugo])
    const cookie = await loginAt(server.url)

    for (const p of ['/', '/posts/', '/posts/tide-tables/']) {
      const direct = await (await fetch(hugo + p)).text()
      const proxied = await fetch(server.url + p)
      t.equal(proxied.status, 200, p)
      const html = await proxied.text()
      t.ok(html.includes(`${TAG}</body>`), `${p}: the tag before </body>`)
      t.equal(withoutTag(html), direct, `${p}: otherwise hugo's bytes`)
    }
    const css = await fetch(server.url + '/style.css')
    t.equal(await css.text(), await (await fetch(hugo + '/style.css')).text(), 'assets pass as they are')
    t.match(css.headers.get('content-type'), /^text\/css/)
    const missing = await fetch(server.url + '/no/such/')
    t.equal(missing.status, 404, 'the dev server\'s 404 passes')

    t.equal((await (await fetch(server.url + '/admin')).text()).includes('SHADOW'), false, '/admin is the Studio')
    t.match(await (await fetch(server.url + '/__cms/bootstrap.js')).text(), /^window\.__CMS_API__=/, '/__cms/ is git-cms\'s')
    t.equal((await fetch(server.url + '/api/cms/collections')).status, 401, 'the API answers for itself')

    const signedIn = await (await fetch(server.url + '/posts/tide-tables/', { headers: { cookie } })).text()
    t.ok(signedIn.includes('<div data-cms-md="posts/tide-tables#body" class="post-body">'), 'signed in: the body element is marked')

    // Hugo's live reload is a WebSocket at /livereload: the upgrade passes through.
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(server.url + '/livereload', { headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' } })
      req.on('upgrade', (res, socket) => { socket.destroy(); resolve(res.statusCode ?? 0) })
      req.on('response', res => { resolve(res.statusCode ?? 0) })
      req.on('error', reject)
      req.end()
    })
    t.equal(status, 101, 'the live-reload WebSocket is switched through')
  })
}

/** A page whose templates already mark the body and include the script. */
const MARKED = '<!doctype html><body><div data-cms-md="posts/hello#body"><p>Hello</p></div><script src="/__cms/bootstrap.js" defer></script></body>'

t.test('what reaches the upstream, and what comes back', async t => {
  let seen: { method?: string, url?: string, host?: string, cookie?: string, body: string } = { body: '' }
  const upstream = createServer((req, res) => {
    let body = ''
    req.on('data', (c: Buffer) => { body += c.toString() })
    req.on('end', () => {
      seen = { method: req.method, url: req.url, host: req.headers.host, cookie: req.headers.cookie, body }
      if (req.url === '/away') { res.writeHead(302, { location: `http://${req.headers.host ?? ''}/landed/?x=1` }); res.end(); return }
      if (req.url === '/elsewhere') { res.writeHead(302, { location: 'https://example.org/out' }); res.end(); return }
      if (req.url === '/zipped') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip', etag: '"abc"' })
        res.end(gzipSync('<!doctype html><title>z</title><p>Zipped page</p>'))
        return
      }
      if (req.url === '/marked') {
        res.writeHead(200, { 'content-type': 'text/html' })
        res.end(MARKED)
        return
      }
      if (req.url === '/data.json') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
        res.end(gzipSync('{"a":1}'))
        return
      }
      res.writeHead(201, { 'content-type': 'text/plain', 'x-upstream': 'yes' })
      res.end(`${req.method ?? ''} ${body}`)
    })
  })
  const upstreamUrl = await listen(t, upstream)
  const repoDir = await makeSite(t)
  const { cms, services } = await openCms({ repoDir, env: { CMS_EDIT_PASSWORD: TEST_PASSWORD, CMS_SESSION_SECRET: TEST_SECRET }, logger: silentLogger() })
  t.teardown(async () => { await cms.close() })
  cms.app.use(siteMiddleware(services, { proxy: new URL(upstreamUrl) }))
  const base = await listen(t, createServer(cms.app.callback()))
  const session = await loginAt(base)

  const posted = await fetch(`${base}/form?q=1`, { method: 'POST', body: 'name=value', headers: { cookie: `${session}; theme=dark`, 'content-type': 'application/x-www-form-urlencoded' } })
  t.equal(posted.status, 201)
  t.equal(posted.headers.get('x-upstream'), 'yes')
  t.equal(await posted.text(), 'POST name=value', 'method and body reach the upstream')
  t.equal(seen.url, '/form?q=1')
  t.equal(seen.host, new URL(upstreamUrl).host, 'Host is the upstream\'s')
  t.equal(seen.cookie, 'theme=dark', 'the session cookie stays with git-cms, the site\'s cookies pass')

  const away = await fetch(`${base}/away`, { redirect: 'manual' })
  t.equal(away.headers.get('location'), '/landed/?x=1', 'a redirect to the upstream\'s origin stays on ours')
  const out = await fetch(`${base}/elsewhere`, { redirect: 'manual' })
  t.equal(out.headers.get('location'), 'https://example.org/out', 'other redirects are left alone')

  const zipped = await fetch(`${base}/zipped`, { headers: { 'accept-encoding': 'gzip' } })
  t.equal(zipped.headers.get('content-encoding'), null, 'a compressed page is sent decompressed')
  t.equal(zipped.headers.get('etag'), null, 'and without the upstream\'s validator')
  t.equal(await zipped.text(), `<!doctype html><title>z</title><p>Zipped page</p>${TAG}`, 'no </body>: the tag goes at the end')

  const marked = await fetch(`${base}/marked`, { headers: { cookie: session } })
  t.equal(await marked.text(), MARKED, 'a page the templates already mark is sent as it is, signed in too')

  const json = await new Promise<{ encoding: string | undefined, bytes: Buffer }>((resolve, reject) => {
    http.get(`${base}/data.json`, { headers: { 'accept-encoding': 'gzip' } }, res => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => { resolve({ encoding: res.headers['content-encoding'], bytes: Buffer.concat(chunks) }) })
    }).on('error', reject)
  })
  t.equal(json.encoding, 'gzip')
  t.same(json.bytes, gzipSync('{"a":1}'), 'other responses pass byte for byte, still compressed')

  upstream.closeAllConnections()
  await new Promise(resolve => upstream.close(resolve))
  const down = await fetch(`${base}/gone`)
  t.equal(down.status, 502, 'an upstream that does not answer is a 502')
  t.match(await down.json(), { error: /did not answer/ })
})
