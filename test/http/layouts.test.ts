/**
 * Real layouts over HTTP (CONTRACT section 11): Jekyll `_posts` and root pages, Hugo page bundles
 * (`index` and `_index`), nested Astro folders with `.mdx`, `files` collections, inferred
 * collections, uploads per collection and beside a bundle; ids with spaces, apostrophes and `/`.
 */
import t, { type Test } from 'tap'
import { readFile, stat, symlink, writeFile, mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { startServer, repoFingerprint, writeHeaders, type TestServer } from '../helpers/site.js'
import { makeExampleSite } from '../helpers/example-site.js'
import { loadConfig } from '../../lib/config.js'

const API = '/api/cms'
// The smallest valid PNG (1x1).
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154789c626001000000050001a5f645400000000049454e44ae426082', 'hex')

interface Client {
  s: TestServer
  cookie: string
  mutate: (body: unknown) => Promise<Response>
  list: (collection: string, extra?: string) => Promise<any>
  read: (collection: string, id: string) => Promise<Response>
  file: (rel: string) => Promise<string>
  exists: (rel: string) => Promise<boolean>
}

async function client (t: Test, repoDir: string, config: Record<string, unknown>): Promise<Client> {
  const s = await startServer(t, { repoDir, config })
  const cookie = await s.login()
  return {
    s,
    cookie,
    mutate: async body => await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) }),
    list: async (collection, extra = '') => await (await s.request(`${API}/entries?collection=${collection}&pageSize=100${extra}`, { headers: { cookie } })).json(),
    read: async (collection, id) => await s.request(`${API}/entries?collection=${collection}&id=${encodeURIComponent(id)}`, { headers: { cookie } }),
    file: async rel => await readFile(path.join(repoDir, rel), 'utf8'),
    exists: async rel => await stat(path.join(repoDir, rel)).then(() => true, () => false)
  }
}

const ids = (body: { entries: Array<{ id: string }> }): string[] => body.entries.map(e => e.id).sort()
const titleOf = (body: { entries: Array<{ id: string, data?: { title?: unknown } }> }, id: string): unknown => body.entries.find(e => e.id === id)?.data?.title

t.test('a collection name that is a folder name is a config error naming the folder key', async t => {
  await t.rejects(loadConfig('/nonexistent', { collections: { _posts: { format: 'md' } } } as never), {
    message: 'Invalid config: collections._posts: a collection name must match ^[a-z0-9][a-z0-9_-]{0,63}$ (use folder: _posts to read that folder)'
  })
  for (const folder of ['../outside', '/etc', '.git', '.git/refs', 'a/../../b', 'a\\b']) {
    await t.rejects(loadConfig('/nonexistent', { collections: { posts: { folder } } } as never), { message: /collections\.posts\.folder/ }, folder)
  }
  await t.rejects(loadConfig('/nonexistent', { collections: { posts: { files: ['_data/a.yml', 'other/a.json'] } } } as never), { message: /two files give the entry id "a"/ })
  await t.rejects(loadConfig('/nonexistent', { collections: { posts: { uploadsDir: 'static/images' } } } as never), { message: /collections\.posts\.uploadsUrl: is required/ })
})

t.test('Jekyll: _posts, root pages, _data files; list, read, save, create, delete', async t => {
  const repo = await makeExampleSite(t, 'jekyll', {
    // A data file's top level that is an object, and names real sites have.
    '_posts/2023-02-03-what\'s new in v1.2.md': '---\ntitle: What\'s new in v1.2\n---\nNews.\n'
  })
  const c = await client(t, repo, {
    collections: {
      posts: { folder: '_posts', format: 'md' },
      pages: { folder: '.', format: 'md' },
      authors: { files: ['_data/authors.json'] },
      data: { folder: '_data', format: 'yaml' }
    }
  })
  const posts = await c.list('posts')
  t.same(ids(posts), [
    '2019-03-08-welcome-to-jekyll', '2020-06-15-field-trip', '2021-11-30-written-on-windows',
    '2022-05-01-so-it-begins', '2023-02-03-what\'s new in v1.2'
  ], 'every file of _posts is listed (.markdown too), named as on disk')
  t.equal(titleOf(posts, '2022-05-01-so-it-begins'), 'So it begins')
  t.equal(titleOf(posts, '2023-02-03-what\'s new in v1.2'), 'What\'s new in v1.2')
  t.same(ids(await c.list('pages')), ['about', 'index'], 'root pages, nothing from _layouts or assets')
  t.same(ids(await c.list('authors')), ['authors'])
  const navigation = await c.read('data', 'navigation')
  t.equal(navigation.status, 200)
  t.same((await navigation.json()).entries[0].data.items[0], { title: 'Home', url: '/' }, 'a list-shaped _data file reads as { items }')

  const id = '2023-02-03-what\'s new in v1.2'
  const read = await c.read('posts', id)
  t.equal(read.status, 200)
  const entry = (await read.json()).entries[0]
  t.equal(entry.id, id)
  t.equal(entry.data.body, 'News.\n')
  const saved = await c.mutate({ type: 'save_field', collection: 'posts', id, field: 'title', value: 'New in 1.2', expectedRevision: entry.revision })
  t.equal(saved.status, 200)
  t.match(await c.file(`_posts/${id}.md`), /title: New in 1\.2\n---\nNews\.\n$/)

  const created = await c.mutate({ type: 'put_entry', collection: 'posts', id: '2024-01-01-a new year', data: { title: 'A new year', body: 'Hi.\n' } })
  t.equal(created.status, 200)
  t.ok(await c.exists('_posts/2024-01-01-a new year.md'), 'written as a real file name in _posts')
  t.equal((await c.mutate({ type: 'delete_entry', collection: 'posts', id: '2024-01-01-a new year' })).status, 200)
  t.notOk(await c.exists('_posts/2024-01-01-a new year.md'))
  const history = await (await c.s.request(`${API}/history?collection=posts&id=${encodeURIComponent('2024-01-01-a new year')}`, { headers: { cookie: c.cookie } })).json()
  t.equal(history.history.length, 1, 'history of an id with spaces is kept on the ref')

  // A files collection: its entries are its files; no other id, nothing created beside them.
  const authors = await c.read('authors', 'authors')
  t.equal(authors.status, 200)
  const before = await repoFingerprint(repo)
  const other = await c.mutate({ type: 'put_entry', collection: 'authors', id: 'other', data: { x: 1 } })
  t.equal(other.status, 400)
  t.equal((await c.read('authors', 'other')).status, 400)
  t.equal(await repoFingerprint(repo), before, 'nothing written for an id that is not one of the files')
  t.equal((await c.mutate({ type: 'put_entry', collection: 'authors', id: 'authors', data: { ada: { name: 'Ada' } }, expectedRevision: (await authors.json()).entries[0].revision })).status, 200)
  t.same(JSON.parse(await c.file('_data/authors.json')), { ada: { name: 'Ada' } }, 'the listed file is written in place')
})

t.test('Hugo: page bundles (index and _index), root pages, names with spaces and apostrophes', async t => {
  const repo = await makeExampleSite(t, 'hugo', {
    'content/post/it\'s a bundle/index.md': '---\ntitle: It\'s a bundle\n---\nBundled.\n',
    'content/post/it\'s a bundle/photo.png': PNG
  })
  const c = await client(t, repo, {
    collections: {
      pages: { folder: 'content', format: 'md' },
      post: { folder: 'content/post', format: 'md', indexFile: 'index', uploadsDir: 'static/images', uploadsUrl: '/images' },
      docs: { folder: 'content/docs', format: 'md', indexFile: '_index', frontmatter: 'toml' },
      data: { folder: 'data', format: 'toml' }
    }
  })
  t.same(ids(await c.list('pages')), ['_index', 'about'], 'root pages of content/, sections not entered')
  const post = await c.list('post')
  t.same(ids(post), ['Markdown Syntax', '_index', 'hello-world', 'it\'s a bundle', 'json-frontmatter', 'rich-content', 'what\'s new', 'yaml-frontmatter'])
  t.equal(titleOf(post, 'it\'s a bundle'), 'It\'s a bundle', 'a bundle is read from its index file')
  t.equal(titleOf(post, 'yaml-frontmatter'), 'Front matter in YAML')
  t.equal(titleOf(post, 'what\'s new'), 'What\'s new in v1.2', 'TOML frontmatter, a name with an apostrophe and a space')
  t.equal(titleOf(await c.list('pages'), 'about'), 'About', 'a root page')
  t.same(ids(await c.list('docs')), ['_index', 'getting-started/configure', 'getting-started/install'], 'nested files below a bundle collection')
  t.same(ids(await c.list('data')), ['authors', 'social'])

  // A bundle entry: read and save by its folder name.
  const read = await c.read('post', 'it\'s a bundle')
  t.equal(read.status, 200)
  const saved = await c.mutate({ type: 'save_field', collection: 'post', id: 'it\'s a bundle', field: 'body', value: 'Rebundled.\n' })
  t.equal(saved.status, 200)
  t.equal(await c.file('content/post/it\'s a bundle/index.md'), '---\ntitle: It\'s a bundle\n---\nRebundled.\n')

  // Create a bundle, upload beside it, delete it: the image stays, the folder with it.
  t.equal((await c.mutate({ type: 'put_entry', collection: 'post', id: 'new-post', data: { title: 'New', body: 'x\n' } })).status, 200)
  t.ok(await c.exists('content/post/new-post/index.md'), 'a new bundle entry is <id>/index.md')
  const up = await upload(c, '?collection=post&id=new-post')
  t.equal(up.status, 200)
  const { url } = await up.json()
  t.match(url, /^file-[0-9a-f]{8}\.png$/, 'a bundle upload is referenced relative to the page')
  t.ok(await c.exists(`content/post/new-post/${url as string}`), 'stored beside the entry')
  t.equal((await c.mutate({ type: 'delete_entry', collection: 'post', id: 'new-post' })).status, 200)
  t.notOk(await c.exists('content/post/new-post/index.md'), 'the index file is removed')
  t.ok(await c.exists(`content/post/new-post/${url as string}`), 'the bundle\'s image is kept')
  t.notOk((await c.list('post')).entries.some((e: { id: string }) => e.id === 'new-post'))

  // A bundle whose folder holds only its index file goes away whole.
  t.equal((await c.mutate({ type: 'put_entry', collection: 'docs', id: 'guides', data: { title: 'Guides', body: '' } })).status, 200)
  t.ok(await c.exists('content/docs/guides/_index.md'), 'an _index bundle')
  t.match(await c.file('content/docs/guides/_index.md'), /^\+\+\+\n/, 'created with the collection\'s frontmatter kind (toml)')
  t.equal((await c.mutate({ type: 'delete_entry', collection: 'docs', id: 'guides' })).status, 200)
  t.notOk(await c.exists('content/docs/guides'), 'an emptied bundle folder is removed')

  // Uploads of the collection (not for a bundle) go to its own uploadsDir and URL.
  const own = await upload(c, '?collection=post')
  t.equal(own.status, 200)
  const ownUrl = (await own.json()).url as string
  t.match(ownUrl, /^\/images\/\d{4}\/\d{2}\/file-[0-9a-f]{8}\.png$/)
  t.ok(await c.exists(`static/${ownUrl.slice(1)}`))
  const served = await c.s.request(ownUrl)
  t.equal(served.status, 200, 'the collection\'s uploads are served at their URL')
  t.equal(served.headers.get('content-type'), 'image/png')

  // An upload for a bundle entry that does not exist makes no bundle folder: it goes to the
  // collection's uploads (issue 31).
  const early = await upload(c, '?collection=post&id=not-yet')
  t.equal(early.status, 200)
  t.match((await early.json()).url, /^\/images\/\d{4}\/\d{2}\/file-[0-9a-f]{8}\.png$/, 'stored with the collection\'s uploads')
  t.notOk(await c.exists('content/post/not-yet'), 'no folder for an entry nobody created')
})

t.test('Astro: nested folders, .mdx beside .md, one id one file', async t => {
  const repo = await makeExampleSite(t, 'astro')
  const c = await client(t, repo, {
    collections: {
      blog: { folder: 'src/content/blog', format: 'md', nested: true },
      authors: { folder: 'src/content/authors', format: 'json' }
    }
  })
  const blog = await c.list('blog')
  t.same(ids(blog), ['2023/launch', 'first-post', 'markdown-style-guide', 'second-post', 'using-mdx'], '.mdx posts and nested posts are listed')
  t.equal(titleOf(blog, 'using-mdx'), 'Using MDX')
  t.equal(titleOf(blog, '2023/launch'), 'We launched')
  t.same(ids(await c.list('authors')), ['ada', 'grace'])

  // Writing an existing .mdx entry writes that file, never a .md beside it.
  const before = await c.file('src/content/blog/using-mdx.mdx')
  const put = await c.mutate({ type: 'save_field', collection: 'blog', id: 'using-mdx', field: 'title', value: 'Using MDX!' })
  t.equal(put.status, 200)
  t.notOk(await c.exists('src/content/blog/using-mdx.md'))
  const after = await c.file('src/content/blog/using-mdx.mdx')
  t.not(after, before)
  t.equal(after.slice(after.indexOf('\n---\n')), before.slice(before.indexOf('\n---\n')), 'the MDX body (imports, JSX) is kept')

  // A nested entry: created in its folder, read back by its id.
  t.equal((await c.mutate({ type: 'put_entry', collection: 'blog', id: '2024/spring/hello world', data: { title: 'Hello', body: 'Hi.\n' } })).status, 200)
  t.ok(await c.exists('src/content/blog/2024/spring/hello world.md'))
  t.equal((await c.read('blog', '2024/spring/hello world')).status, 200)
  t.equal((await c.mutate({ type: 'delete_entry', collection: 'blog', id: '2024/spring/hello world' })).status, 200)
  t.notOk(await c.exists('src/content/blog/2024'), 'emptied folders are removed')

  // Two files for one id: listed unreadable, reads 422, nothing written over either.
  await writeFile(path.join(repo, 'src/content/blog/first-post.mdx'), '---\ntitle: Twin\n---\n')
  await c.s.services.content.index('blog').then(i => { i.markAllChanged() })
  const twin = (await c.list('blog')).entries.find((e: { id: string }) => e.id === 'first-post')
  t.match(twin, { readError: { message: /Two files map to this id \(first-post\.md, first-post\.mdx\)/ } })
  t.equal((await c.read('blog', 'first-post')).status, 422)
  t.equal((await c.mutate({ type: 'save_field', collection: 'blog', id: 'first-post', field: 'title', value: 'x' })).status, 422)
  await rm(path.join(repo, 'src/content/blog/first-post.mdx'))
  await c.s.services.content.index('blog').then(i => { i.markAllChanged() })
  t.equal((await c.read('blog', 'first-post')).status, 200, 'readable again once one file is gone')
})

t.test('the watcher brings outside changes deep in nested and bundled folders to the right index', async t => {
  const repo = await makeExampleSite(t, 'hugo')
  const c = await client(t, repo, {
    collections: {
      post: { folder: 'content/post', format: 'md', indexFile: 'index' },
      docs: { folder: 'content/docs', format: 'md', nested: true }
    }
  })
  t.equal((await c.list('post')).entries.length, 7)
  t.equal((await c.list('docs')).entries.length, 3)
  // Deep changes leave the collection folder's own mtime as it was: only the watcher tells.
  await mkdir(path.join(repo, 'content/post/outside-bundle'))
  await writeFile(path.join(repo, 'content/post/outside-bundle/index.md'), '---\ntitle: Written outside\n---\n')
  await writeFile(path.join(repo, 'content/docs/getting-started/upgrade.md'), '---\ntitle: Upgrade\n---\n')
  await rm(path.join(repo, 'content/docs/getting-started/install.md'))
  const until = async (check: () => Promise<boolean>): Promise<boolean> => {
    for (let i = 0; i < 100; i++) {
      if (await check()) return true
      await new Promise(resolve => setTimeout(resolve, 100))
    }
    return false
  }
  t.ok(await until(async () => titleOf(await c.list('post'), 'outside-bundle') === 'Written outside'), 'a new bundle is listed')
  t.ok(await until(async () => {
    const docs = ids(await c.list('docs'))
    return docs.includes('getting-started/upgrade') && !docs.includes('getting-started/install')
  }), 'a nested file added and one removed')
})

t.test('inferred collections: only folders that hold content', async t => {
  const repo = await makeExampleSite(t, 'eleventy')
  const c = await client(t, repo, { contentDir: 'src' })
  const res = await c.s.request('/admin/cms', { headers: { cookie: c.cookie } })
  const html = await res.text()
  const shell = JSON.parse(html.slice(html.indexOf('>', html.indexOf('id="cms-studio-config"')) + 1, html.indexOf('</script>', html.indexOf('id="cms-studio-config"')))) as { collections: Array<{ name: string }> }
  t.same(shell.collections.map(x => x.name).sort(), ['pages', 'posts'], 'assets (CSS only) is not a collection; _data and _includes are not names')
  t.equal((await c.s.request(`${API}/entries?collection=assets`, { headers: { cookie: c.cookie } })).status, 404)
  // posts.json is a file of another format in a Markdown folder: not an entry.
  t.same(ids(await c.list('posts')), ['firstpost', 'fourthpost', 'secondpost'])
})

t.test('nothing silently skipped: bad file names are listed unreadable', async t => {
  const repo = await makeExampleSite(t, 'astro', {
    'src/content/blog/-starts-with-dash.md': '---\ntitle: Dash\n---\n',
    'src/content/blog/.hidden.md': '---\ntitle: Hidden\n---\n',
    'src/content/blog/.drafts/x.md': '---\ntitle: Hidden folder\n---\n',
    'src/content/blog/ends with dot..md': '---\ntitle: Dot\n---\n',
    'src/content/blog/notes.txt': 'not an entry\n'
  })
  const c = await client(t, repo, { collections: { blog: { folder: 'src/content/blog', format: 'md', nested: true } } })
  const blog = await c.list('blog')
  t.ok(ids(blog).includes('-starts-with-dash'))
  t.match(blog.entries.find((e: { id: string }) => e.id === '-starts-with-dash'), { readError: { message: /not a valid entry id/ } })
  t.match(blog.entries.find((e: { id: string }) => e.id === 'ends with dot.'), { readError: { message: /not a valid entry id/ } })
  t.notOk(ids(blog).some(id => id.includes('hidden') || id.includes('drafts') || id.includes('notes')), 'hidden names and other extensions are not entries')
})

t.test('hostile ids and folders are 400 on every route, with nothing read or written', async t => {
  const elsewhere = path.join(path.dirname(await makeExampleSite(t, 'astro')), `elsewhere-${process.pid}-${Date.now()}`)
  await mkdir(elsewhere, { recursive: true })
  t.teardown(async () => { await rm(elsewhere, { recursive: true, force: true }) })
  await writeFile(path.join(elsewhere, 'secret.md'), '---\ntitle: do not leak\n---\n')
  await writeFile(path.join(elsewhere, 'secret.json'), '{"title":"do not leak"}\n')
  const repo = await makeExampleSite(t, 'astro')
  await mkdir(path.join(repo, 'content'), { recursive: true })
  await symlink(elsewhere, path.join(repo, 'content/linked'))
  await symlink(elsewhere, path.join(repo, 'src/content/blog/away'))
  const c = await client(t, repo, {
    collections: {
      blog: { folder: 'src/content/blog', format: 'md', nested: true },
      flat: { folder: 'src/content/authors', format: 'json' },
      linkedexplicit: { folder: 'content/linked', format: 'md' }
    }
  })
  const before = await repoFingerprint(repo)
  const hostile = ['../x', 'a/../../x', '/etc/passwd', 'a\u0000b', '.git', '.git/config', '..', 'a//b', '-rf', 'x/', 'x'.repeat(1100), 'constructor', 'a\\b']
  const routes = async (collection: string, id: string): Promise<Array<[string, Response]>> => {
    const q = `collection=${collection}&id=${encodeURIComponent(id)}`
    const h = { headers: { cookie: c.cookie } }
    const w = { method: 'POST', headers: writeHeaders(c.cookie) }
    return [
      ['entries', await c.s.request(`${API}/entries?${q}`, h)],
      ['history', await c.s.request(`${API}/history?${q}`, h)],
      ['restore', await c.s.request(`${API}/history`, { ...w, body: JSON.stringify({ collection, id, ts: 1 }) })],
      ['save_field', await c.mutate({ type: 'save_field', collection, id, field: 'title', value: 'x' })],
      ['put_entry', await c.mutate({ type: 'put_entry', collection, id, data: { title: 'x' } })],
      ['delete_entry', await c.mutate({ type: 'delete_entry', collection, id })],
      ['update_page_layout', await c.mutate({ type: 'update_page_layout', collection, id, layout: [] })],
      ['md_block', await c.mutate({ type: 'md_block', collection, id, blockPath: '0', src: 'x', html: '<p>x</p>' })],
      ['reorder', await c.mutate({ type: 'reorder_entries', collection, order: [id] })],
      ['discard', await c.s.request(`${API}/draft?${q}`, { method: 'DELETE', headers: writeHeaders(c.cookie) })],
      ['publish', await c.s.request(`${API}/publish`, { ...w, body: JSON.stringify({ collection, id }) })],
      ['upload', await upload(c, `?${q}`)]
    ]
  }
  for (const id of hostile) {
    for (const [route, res] of await routes('blog', id)) {
      const text = await res.text()
      t.equal(res.status, 400, `${route} ${JSON.stringify(id)}`)
      t.notMatch(text, 'do not leak')
    }
  }
  // Percent-encoded escapes in a query string are decoded once, then refused.
  for (const raw of ['%2e%2e', '%2e%2e%2f%2e%2e%2fx', 'a%2F..%2F..%2Fx', '%00', '.%2egit']) {
    for (const route of ['entries', 'history']) {
      const res = await c.s.request(`${API}/${route}?collection=blog&id=${raw}`, { headers: { cookie: c.cookie } })
      t.equal(res.status, 400, `${route} id=${raw}`)
    }
    t.equal((await upload(c, `?collection=blog&id=${raw}`)).status, 400, `upload id=${raw}`)
  }
  // A `/` is an escape in a flat collection.
  for (const [route, res] of await routes('flat', 'a/b')) t.equal(res.status, 400, `${route} a/b in a flat collection`)
  // Folders that are links leaving the repository: the inferred one, the explicit one, one inside.
  for (const collection of ['linked', 'linkedexplicit']) {
    for (const [route, res] of await routes(collection, 'secret')) {
      const text = await res.text()
      t.equal(res.status, 400, `${route} in ${collection}`)
      t.notMatch(text, 'do not leak')
    }
    const list = await c.s.request(`${API}/entries?collection=${collection}`, { headers: { cookie: c.cookie } })
    t.equal(list.status, 400, `list of ${collection}`)
    t.notMatch(await list.text(), 'do not leak')
  }
  for (const [route, res] of await routes('blog', 'away/secret')) {
    const text = await res.text()
    t.not(res.status, 200, `${route} through a linked subfolder`)
    t.notMatch(text, 'do not leak')
  }
  const blog = await c.list('blog')
  t.notOk(ids(blog).some(id => id.startsWith('away')), 'a linked subfolder is never entered')
  t.equal(await repoFingerprint(repo), before, 'nothing changed')
  t.notOk(await stat(path.join(elsewhere, 'x.md')).then(() => true, () => false), 'nothing written outside')
})

async function upload (c: Client, query: string): Promise<Response> {
  const form = new FormData()
  form.append('file', new Blob([PNG], { type: 'image/png' }), 'file.png')
  return await c.s.request(`${API}/upload${query}`, { method: 'POST', headers: { cookie: c.cookie, 'x-cms-request': '1' }, body: form })
}
