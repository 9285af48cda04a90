import t, { type Test } from 'tap'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { openCms, type Cms } from '../../lib/cms.js'
import { startServer } from '../../lib/server.js'
import { demoSite } from '../../lib/demo/site.js'
import { makeSite, repoFingerprint, TEST_PASSWORD, TEST_SECRET } from '../helpers/site.js'

async function serveDemo (t: Test, files: Record<string, string | null> = {}): Promise<{ url: string, repoDir: string, cms: Cms, get: (p: string) => Promise<Response> }> {
  const repoDir = await makeSite(t, files)
  const { cms, services } = await openCms({ repoDir, env: { CMS_EDIT_PASSWORD: TEST_PASSWORD, CMS_SESSION_SECRET: TEST_SECRET, CMS_LOG_LEVEL: 'silent' } })
  cms.app.use(demoSite(services))
  const running = await startServer({ cms, port: 0 })
  t.teardown(async () => { await running.close() })
  return { url: running.url, repoDir, cms, get: async (p: string) => await fetch(running.url + p) }
}

t.test('every fixture entry is readable and valid, and the config declares each kind of collection', async t => {
  const repoDir = await makeSite(t)
  const { cms, services } = await openCms({ repoDir, env: { CMS_SESSION_SECRET: TEST_SECRET, CMS_LOG_LEVEL: 'silent' } })
  t.teardown(async () => { await cms.close() })
  const collections = await services.content.registry.list()
  const byName = new Map(collections.map(c => [c.name, c]))
  t.match(byName.get('posts'), { source: 'explicit', format: 'md', titleField: 'title', metadata: { label: 'Posts' } })
  t.match(byName.get('pages'), { source: 'explicit', format: 'json', layoutField: 'sections', metadata: { orderable: true } })
  t.match(byName.get('authors'), { source: 'explicit', format: 'yaml' })
  t.match(byName.get('settings'), { source: 'explicit', metadata: { singletonId: 'site', creatable: false, deletable: false } })
  t.match(byName.get('snippets'), { source: 'inferred', format: 'json' })
  let total = 0
  for (const c of collections) {
    for (const entry of await (await services.content.index(c.name)).all()) {
      total++
      t.equal(entry.readError, undefined, `${c.name}/${entry.id} readable`)
      t.equal(entry.validationIssues, undefined, `${c.name}/${entry.id} valid`)
    }
  }
  t.ok(total >= 12, `a dozen entries or more (${total})`)
})

// The read-only checks share one server over an untouched copy of the fixtures.
const shared = serveDemo(t)

t.test('the home page lists published posts newest first and the pages; drafts are not listed', async t => {
  const { get } = await shared
  const res = await get('/')
  t.equal(res.status, 200)
  t.match(res.headers.get('content-type'), /^text\/html; charset=utf-8/)
  const html = await res.text()
  t.match(html, '<script src="/__cms/bootstrap.js" defer></script>')
  t.match(html, 'data-cms="settings/site#title">Field Notes</a>')
  const order = ['writing-alt-text', 'drafts-and-publishing', 'editing-in-place', 'hello-world'].map(id => html.indexOf(`href="/posts/${id}"`))
  t.ok(order.every(i => i > 0), 'every published post is listed')
  t.same([...order].sort((a, b) => a - b), order, 'newest first')
  t.notMatch(html, '/posts/static-sites-in-2026', 'the draft post is not listed')
  for (const id of ['home', 'about', 'contact']) t.match(html, `href="/pages/${id}"`)
  t.match(html, 'data-cms="snippets/footer#text"', 'the inferred collection feeds the footer')
})

t.test('a post renders its Markdown body with source stamps and binds its title', async t => {
  const { get } = await shared
  const res = await get('/posts/editing-in-place')
  t.equal(res.status, 200)
  const html = await res.text()
  t.match(html, '<h1 data-cms="posts/editing-in-place#title">Editing text where it lives</h1>')
  t.match(html, 'data-cms-md="posts/editing-in-place#body"')
  t.match(html, /data-cms-src="\d+:\d+:[0-9a-f]{16}"/)
  t.match(html, '<img src="/uploads/2026/01/harbour-at-dusk-340535e6.png"')
  t.match(html, 'by Tom Becker')
  t.match(html, '<blockquote')
  const cover = await get('/uploads/2026/01/harbour-at-dusk-340535e6.png')
  t.equal(cover.status, 200, 'the cover image is served')
  t.equal(Buffer.from(await cover.arrayBuffer()).subarray(1, 4).toString(), 'PNG')
})

t.test('a post rendered by markdown-it carries the data-cms-md attribute and no source hints', async t => {
  const { get } = await shared
  const res = await get('/markdown-it/posts/editing-in-place')
  t.equal(res.status, 200)
  const html = await res.text()
  t.match(html, '<div data-cms-md="posts/editing-in-place#body">\n<p>Editors should not have to hunt')
  t.notMatch(html, /\sdata-cms-src="/, 'another engine: no hints')
  t.match(html, '<h2>How it works</h2>')
  t.match(html, '<pre><code class="language-html">&lt;p data-cms-src=')
  t.match(html, '<h1 data-cms="posts/editing-in-place#title">Editing text where it lives</h1>')
  t.match(html, '<script src="/__cms/bootstrap.js" defer></script>')
  t.equal((await get('/markdown-it/posts/nope')).status, 404)
  t.equal((await get('/markdown-it/posts/..%2Fpages%2Fhome')).status, 404)
})

t.test('markdown-it escapes raw HTML and refuses script links in a post body', async t => {
  const { get } = await serveDemo(t, {
    'content/posts/evil.md': '---\ntitle: Evil\n---\n<script>alert(1)</script>\n\n[x](javascript:alert(2)) <img src=x onerror=alert(3)>\n'
  })
  const html = await (await get('/markdown-it/posts/evil')).text()
  t.notMatch(html, '<script>alert')
  t.notMatch(html, 'href="javascript:')
  t.notMatch(html, '<img src=x')
  t.match(html, '&lt;script&gt;alert(1)&lt;/script&gt;')
})

t.test('a page renders its sections bound by index', async t => {
  const { get } = await shared
  const html = await (await get('/pages/home')).text()
  t.match(html, '<h1 data-cms="pages/home#sections.0.heading">Websites that editors enjoy</h1>')
  t.match(html, 'data-cms="pages/home#sections.1.text"')
  t.match(html, '<a class="button" href="/pages/contact" data-cms="pages/home#sections.2.linkLabel">Get in touch</a>')
})

t.test('titles from content are escaped; a change on disk shows at once; unknown ids are 404', async t => {
  const { get, repoDir } = await serveDemo(t, {
    'content/posts/evil.md': '---\ntitle: "<script>alert(1)</script>"\ndate: "2026-04-01"\n---\nHi <b>there</b>\n',
    'content/pages/evil.json': JSON.stringify({ title: 'Evil', sections: [{ type: 'hero', heading: '<img src=x onerror=alert(1)>' }] }) + '\n'
  })
  const home = await (await get('/')).text()
  t.match(home, 'data-cms="posts/evil#title">&lt;script&gt;alert(1)&lt;/script&gt;</a>')
  t.notMatch(home, '<script>alert(1)')
  const post = await (await get('/posts/evil')).text()
  t.match(post, '<h1 data-cms="posts/evil#title">&lt;script&gt;alert(1)&lt;/script&gt;</h1>')
  t.notMatch(post, '<script>alert(1)')
  const page = await (await get('/pages/evil')).text()
  t.match(page, '&lt;img src=x onerror=alert(1)&gt;')
  t.notMatch(page, '<img src=x')

  await writeFile(path.join(repoDir, 'content/posts/evil.md'), '---\ntitle: Changed on disk\ndate: "2026-04-01"\n---\nNew text.\n')
  t.match(await (await get('/posts/evil')).text(), '<h1 data-cms="posts/evil#title">Changed on disk</h1>', 'the next request shows the new file')

  const before = await repoFingerprint(repoDir)
  for (const p of ['/posts/nope', '/pages/nope', '/posts/..%2Fcms.config', '/posts/-x', '/pages/__proto__']) {
    const res = await get(p)
    t.equal(res.status, 404, p)
    t.match(await res.text(), 'Page not found')
  }
  t.equal(await repoFingerprint(repoDir), before, 'reads change nothing')
  t.equal((await get('/elsewhere')).status, 404, 'other paths are not the site\'s')
})
