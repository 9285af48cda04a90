/**
 * `git-cms serve --site <dir>` over a folder Debian's hugo built from test/fixtures/proxy-site/:
 * the site's bytes with the bootstrap tag, git-cms's routes first, paths out of the folder refused,
 * and for a signed-in editor each page's body element marked with its entry (by the posts' `url`
 * pattern, and by body text for the pages without one and for an instance with no pattern at all).
 */
import t from 'tap'
import http from 'node:http'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { openCms } from '../../lib/cms.js'
import { siteFolder, siteMiddleware } from '../../lib/http/site-proxy.js'
import { silentLogger, TEST_PASSWORD, TEST_SECRET } from '../helpers/site.js'
import { loginAt } from '../helpers/spawn-server.js'
import { buildProxySite, hasHugo, spawnServe, TAG, withoutTag } from '../helpers/proxy-site.js'

if (!hasHugo()) {
  t.comment('Debian hugo is not installed at /usr/bin/hugo: the site tests are skipped')
} else {
  const site = await buildProxySite(t)
  // Things a site folder must never expose, and files that would shadow git-cms's own routes.
  await writeFile(path.join(site.tmp, 'secret.txt'), 'outside the site')
  await symlink(path.join(site.tmp, 'secret.txt'), path.join(site.publicDir, 'leak.txt'))
  await symlink(site.tmp, path.join(site.publicDir, 'up'))
  await writeFile(path.join(site.publicDir, '.env'), 'TOKEN=hidden')
  for (const own of ['admin/index.html', '__cms/bootstrap.js', 'api/cms/collections']) {
    await mkdir(path.dirname(path.join(site.publicDir, own)), { recursive: true })
    await writeFile(path.join(site.publicDir, own), 'SHADOW')
  }
  const server = await spawnServe(t, ['--repo', site.repoDir, '--site', site.publicDir])
  const cookie = await loginAt(server.url)
  const get = async (p: string, signedIn = false): Promise<Response> => await fetch(server.url + p, { redirect: 'manual', headers: signedIn ? { cookie } : {} })
  const built = async (rel: string): Promise<string> => await readFile(path.join(site.publicDir, rel), 'utf8')

  t.test('pages are the built files plus one script tag before </body>', async t => {
    t.match(server.stdout(), /^site: http:\/\/127\.0\.0\.1:\d+\/ \(/m, 'the site address is printed')
    for (const [p, file] of [['/', 'index.html'], ['/posts/tide-tables/', 'posts/tide-tables/index.html'], ['/posts/tide-tables/index.html', 'posts/tide-tables/index.html']]) {
      const res = await get(p!)
      t.equal(res.status, 200, String(p))
      t.match(res.headers.get('content-type'), /^text\/html/, 'html')
      const html = await res.text()
      t.equal(html.split(TAG).length, 2, `${p}: one tag`)
      t.ok(html.includes(`${TAG}</body>`), `${p}: right before </body>`)
      t.equal(withoutTag(html), await built(file!), `${p}: every other byte is the file's`)
      t.notOk(html.includes('data-cms-md'), `${p}: signed out, no attribute`)
    }
    const css = await get('/style.css')
    t.equal(css.status, 200)
    t.match(css.headers.get('content-type'), /^text\/css/)
    t.equal(await css.text(), await built('style.css'), 'other files are sent as they are')
    const head = await fetch(server.url + '/', { method: 'HEAD' })
    t.equal(head.status, 200)
    t.equal(await head.text(), '')
  })

  t.test('folders, missing pages and 404.html', async t => {
    const folder = await get('/posts')
    t.equal(folder.status, 301)
    t.equal(folder.headers.get('location'), '/posts/')
    const missing = await get('/no/such/page/')
    t.equal(missing.status, 404)
    const html = await missing.text()
    t.equal(withoutTag(html), await built('404.html'), 'the site\'s own 404.html, tagged')
    t.ok(html.includes(TAG))
    t.equal((await get('/posts/tide-tables/index.html', true)).status, 200)
    t.equal((await fetch(server.url + '/', { method: 'POST', body: 'x' })).status, 404, 'a folder answers GET and HEAD only')
  })

  t.test('git-cms routes win over files of the same path', async t => {
    const admin = await get('/admin')
    t.equal(admin.status, 200)
    t.notOk((await admin.text()).includes('SHADOW'), '/admin is the Studio')
    const bootstrap = await get('/__cms/bootstrap.js')
    t.match(await bootstrap.text(), /^window\.__CMS_API__=/, '/__cms/ is git-cms\'s')
    const api = await get('/api/cms/collections')
    t.equal(api.status, 401, 'the API answers for itself')
    t.equal((await get('/__cms/other.js')).status, 404, 'an unknown /__cms/ path is not the site\'s either')
  })

  t.test('paths out of the folder are refused', async t => {
    const raw = async (p: string): Promise<{ status: number, body: string }> => await new Promise((resolve, reject) => {
      http.get(server.url + '/', { path: p }, res => {
        let body = ''
        res.on('data', (c: Buffer) => { body += c.toString() })
        res.on('end', () => { resolve({ status: res.statusCode ?? 0, body }) })
      }).on('error', reject)
    })
    for (const p of ['/../secret.txt', '/..%2fsecret.txt', '/%2e%2e/secret.txt', '/posts/..%2f..%2fsecret.txt', '/leak.txt', '/up/secret.txt', '/.env', '/posts/%00', '/posts%5c..%5c..%5csecret.txt']) {
      const res = await raw(p)
      t.equal(res.status, 403, p)
      t.notOk(res.body.includes('outside the site') || res.body.includes('TOKEN'), `${p}: nothing of the file`)
    }
  })

  t.test('signed in, each page\'s body element names its entry', async t => {
    const cases: Array<[string, string, string]> = [
      ['/posts/tide-tables/', 'posts/tide-tables/index.html', '<div data-cms-md="posts/tide-tables#body" class="post-body">'],
      ['/posts/getting-started/', 'posts/getting-started/index.html', '<div data-cms-md="posts/getting-started#body" class="post-body">'],
      ['/posts/', 'posts/index.html', '<section data-cms-md="posts/_index#body" class="intro">'],
      // `pages` gives no url pattern: found by its body text.
      ['/', 'index.html', '<section data-cms-md="pages/_index#body" class="intro">']
    ]
    for (const [p, file, tag] of cases) {
      const html = await (await get(p, true)).text()
      t.ok(html.includes(tag), `${p}: ${tag}`)
      t.equal(html.split('data-cms-md').length, 2, `${p}: one element marked`)
      const at = html.indexOf(' data-cms-md=')
      const end = html.indexOf('"', html.indexOf('"', at) + 1) + 1
      t.equal(withoutTag(html.slice(0, at) + html.slice(end)), await built(file), `${p}: nothing else changed`)
    }
    t.notOk((await (await get('/no/such/page/', true)).text()).includes('data-cms-md'), 'a page of no entry is left alone')
  })

  t.test('with no url pattern at all, posts are found by their body text', async t => {
    const repo = await buildProxySite(t, false)
    const { cms, services } = await openCms({ repoDir: repo.repoDir, env: { CMS_EDIT_PASSWORD: TEST_PASSWORD, CMS_SESSION_SECRET: TEST_SECRET }, logger: silentLogger() })
    cms.app.use(siteMiddleware(services, { folder: await siteFolder(repo.publicDir) }))
    const local = createServer(cms.app.callback())
    await new Promise<void>(resolve => local.listen(0, '127.0.0.1', resolve))
    t.teardown(async () => { local.closeAllConnections(); await new Promise(resolve => local.close(resolve)); await cms.close() })
    const base = `http://127.0.0.1:${(local.address() as AddressInfo).port}`
    const session = await loginAt(base)
    for (const id of ['tide-tables', 'mooring-knots', 'getting-started']) {
      const html = await (await fetch(`${base}/posts/${id}/`, { headers: { cookie: session } })).text()
      t.ok(html.includes(`<div data-cms-md="posts/${id}#body" class="post-body">`), `${id} matched by text`)
    }
  })
}

t.test('--proxy and --site: usage errors', async t => {
  const { main } = await import('../../lib/cli.js')
  for (const [argv, message] of [
    [['serve', '--proxy', 'http://127.0.0.1:1313', '--site', 'public'], /cannot be combined/],
    [['serve', '--proxy', 'ftp://example.org'], /--proxy needs an http:\/\/ or https:\/\/ address/],
    [['serve', '--proxy', ''], /--proxy needs a URL/],
    [['serve', '--site', ''], /--site needs a folder/],
    [['demo', '--site', 'public'], /--site is for serve/],
    [['init', '--proxy', 'http://127.0.0.1:1313'], /--proxy is for serve/]
  ] as const) {
    let stderr = ''
    const code = await main([...argv], {}, { stdout: { write: () => true }, stderr: { write: (s: string) => { stderr += s } } })
    t.equal(code, 2, argv.join(' '))
    t.match(stderr, message)
  }
})
