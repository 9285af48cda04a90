import t from 'tap'
import { gzipSync } from 'node:zlib'
import { execFileSync } from 'node:child_process'
import { statSync, readdirSync } from 'node:fs'
import vm from 'node:vm'
import { get } from 'node:http'
import path from 'node:path'
import { startServer, repoFingerprint } from '../helpers/site.js'
import { browserAssetDir, globalStatement } from '../../lib/http/admin-routes.js'
import { fromRoot } from '../helpers/repo-root.js'

const ROOT = fromRoot('/')

/** Bundles the browser code when dist/browser is missing or older than lib/browser/editor. */
function ensureBundle (): void {
  const src = path.join(ROOT, 'lib/browser/editor')
  const newest = Math.max(...readdirSync(src).map(f => statSync(path.join(src, f)).mtimeMs))
  const out = path.join(ROOT, 'dist/browser/editor.js')
  let built = 0
  try { built = statSync(out).mtimeMs } catch {}
  if (built < newest) execFileSync(process.execPath, [path.join(ROOT, 'scripts/build-browser.mjs')], { cwd: ROOT })
}
ensureBundle()

t.test('serves the three assets with their content types, within the size budgets', async t => {
  const s = await startServer(t)
  t.ok(browserAssetDir('bootstrap.js'), 'the bundle directory is found from the sources')

  const boot = await s.request('/__cms/bootstrap.js')
  t.equal(boot.status, 200)
  t.match(boot.headers.get('content-type'), /^text\/javascript; charset=utf-8/)
  t.equal(boot.headers.get('x-content-type-options'), 'nosniff')
  const bootText = await boot.text()
  t.ok(bootText.startsWith('window.__CMS_API__="/api/cms";\n'), 'the API base path is injected')
  t.match(bootText, /auth\/session/, 'it asks the session route')
  const bootGzip = gzipSync(Buffer.from(bootText)).length
  t.ok(bootGzip <= 2048, `bootstrap.js is ${bootGzip} bytes gzipped (<= 2 KB)`)

  const editor = await s.request('/__cms/editor.js')
  t.equal(editor.status, 200)
  t.match(editor.headers.get('content-type'), /^text\/javascript; charset=utf-8/)
  const editorBytes = Buffer.from(await editor.arrayBuffer())
  const editorGzip = gzipSync(editorBytes).length
  t.ok(editorGzip <= 60 * 1024, `editor.js is ${editorGzip} bytes gzipped (<= 60 KB)`)
  t.notMatch(editorBytes.toString(), /https?:\/\/(?!localhost)[a-z0-9.-]+\.(com|net|org|io)\//i, 'no CDN URL in the editor')

  const css = await s.request('/__cms/editor.css')
  t.equal(css.status, 200)
  t.match(css.headers.get('content-type'), /^text\/css; charset=utf-8/)
  t.match(await css.text(), /\.cms-toolbar/)

  t.comment(`sizes (gzip): bootstrap.js ${bootGzip} B, editor.js ${editorGzip} B`)
})

t.test('conditional and HEAD requests; other paths and methods are passed on', async t => {
  const s = await startServer(t)
  const first = await s.request('/__cms/editor.js')
  const etag = first.headers.get('etag')
  t.ok(etag, 'an ETag')
  t.equal(first.headers.get('cache-control'), 'no-cache')
  // node:http, not fetch: fetch adds `Cache-Control: no-cache` to a conditional request.
  const revalidate = async (tag: string): Promise<number> => await new Promise((resolve, reject) => {
    get(`${s.url}/__cms/editor.js`, { headers: { 'if-none-match': tag } }, res => { res.resume(); resolve(res.statusCode ?? 0) }).on('error', reject)
  })
  t.equal(await revalidate(etag!), 304, 'a matching ETag: 304')
  t.equal(await revalidate('"other"'), 200, 'another ETag: 200')
  const head = await s.request('/__cms/editor.css', { method: 'HEAD' })
  t.equal(head.status, 200)
  t.equal(Number(head.headers.get('content-length')), Buffer.byteLength(await (await s.request('/__cms/editor.css')).text()))
  t.equal((await s.request('/__cms/studio.js')).status, 404, 'an unknown asset')
  t.equal((await s.request('/__cms/%2e%2e/package.json')).status, 404, 'no encoded path walking')
  t.equal((await s.request('/__cms/editor.js', { method: 'POST' })).status, 404, 'POST is not served')
})

t.test('a configured apiBasePath reaches the bootstrap', async t => {
  const s = await startServer(t, { config: { apiBasePath: '/cms-api' } })
  const text = await (await s.request('/__cms/bootstrap.js')).text()
  t.ok(text.startsWith('window.__CMS_API__="/cms-api";\n'))
  // Run the served script in a bare context: with no bound element on the page it asks nothing.
  const fetched: string[] = []
  const context = {
    window: {} as Record<string, unknown>,
    document: { currentScript: null, readyState: 'complete', querySelector: () => null },
    fetch: async (url: string) => { fetched.push(url); return { ok: true, json: async () => ({ authenticated: false }) } }
  }
  context.window = context as unknown as Record<string, unknown>
  vm.runInNewContext(text, context)
  await new Promise(resolve => setTimeout(resolve, 10))
  t.same(fetched, [], 'no bound element: no session request')
  t.equal(context.window.__CMS_API__, '/cms-api')
})

t.test('globalStatement encodes the path as a literal that cannot end a script', async t => {
  const line = globalStatement('__CMS_API__', '/a"</script><script>alert(1)//')
  t.notMatch(line, /<\/script>/i)
  const ctx = { window: {} as Record<string, unknown> }
  vm.runInNewContext(line, ctx)
  t.equal(ctx.window.__CMS_API__, '/a"</script><script>alert(1)//')
})

t.test('enableInlineEditor: false -> the assets are 404, the API still answers', async t => {
  const s = await startServer(t, { config: { enableInlineEditor: false } })
  const before = await repoFingerprint(s.repoDir)
  for (const name of ['bootstrap.js', 'editor.js', 'editor.css']) {
    const res = await s.request(`/__cms/${name}`)
    t.equal(res.status, 404, name)
    t.notMatch(await res.text(), /__CMS_API__|cms-toolbar/, `${name}: no asset content`)
  }
  const session = await s.request('/api/cms/auth/session')
  t.equal(session.status, 200)
  t.same(await session.json(), { authenticated: false, identity: null })
  t.equal(await repoFingerprint(s.repoDir), before)
})
