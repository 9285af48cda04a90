import t, { type Test } from 'tap'
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { startServer, makeSite, repoFingerprint, writeHeaders, git } from '../helpers/site.js'
import { makePng } from '../helpers/png.js'

const API = '/api/cms'

const png = makePng

const CONFIG = {
  collections: {
    posts: { format: 'md', schema: { type: 'object', properties: { title: { type: 'string' }, cover: { type: 'string' }, body: { type: 'string' } } } },
    blog: { format: 'md', folder: 'content/blog', indexFile: 'index' },
    gallery: { format: 'json', uploadsDir: 'static/images', uploadsUrl: '/images' }
  }
} as const

const FILES: Record<string, string> = {
  'content/blog/trip/index.md': '---\ntitle: Trip\n---\n![the view](view.png)\n',
  'content/blog/plain.md': '---\ntitle: Plain\n---\nNo bundle.\n',
  'content/gallery/one.json': '{ "title": "One", "image": "/images/sunset.png" }\n'
}

interface Listing {
  files: Array<{ path: string, url: string, name: string, folder: string, size: number, mtime: number, type: string, collection?: string, entry?: { collection: string, id: string } }>
  folders: Array<{ path: string, count: number }>
  pagination: { page: number, pageSize: number, total: number, totalPages: number, hasPrev: boolean, hasNext: boolean }
}

async function setup (t: Test, opts: { env?: Record<string, string>, config?: object, before?: (repoDir: string) => Promise<void> } = {}) {
  const repoDir = await makeSite(t, FILES)
  // Binary fixtures: committed with the site.
  await writeFile(path.join(repoDir, 'content/blog/trip/view.png'), png(2, 2, 7))
  await mkdir(path.join(repoDir, 'static/images'), { recursive: true })
  await writeFile(path.join(repoDir, 'static/images/sunset.png'), png(3, 3, 9))
  await writeFile(path.join(repoDir, 'content/blog/stray.png'), png(1, 1, 1))
  await opts.before?.(repoDir)
  git(repoDir, 'add', '-A')
  git(repoDir, 'commit', '-q', '-m', 'media')
  const s = await startServer(t, { repoDir, config: opts.config ?? CONFIG, ...(opts.env !== undefined ? { env: opts.env } : {}) })
  const cookie = await s.login()
  const get = async (p: string): Promise<Response> => await s.request(`${API}${p}`, { headers: { cookie } })
  const list = async (qs = ''): Promise<Listing> => {
    const res = await get(`/media${qs}`)
    if (res.status !== 200) throw new Error(`list ${qs}: ${res.status} ${await res.text()}`)
    return await res.json() as Listing
  }
  const upload = async (name: string, bytes: Buffer): Promise<string> => {
    const fd = new FormData()
    fd.append('file', new Blob([bytes], { type: 'image/png' }), name)
    const res = await s.request(`${API}/upload`, { method: 'POST', headers: { cookie, 'x-cms-request': '1' }, body: fd })
    if (res.status !== 200) throw new Error(`upload: ${res.status} ${await res.text()}`)
    return (await res.json() as { url: string }).url
  }
  const del = async (p: string, extra = ''): Promise<Response> =>
    await s.request(`${API}/media?path=${encodeURIComponent(p)}${extra}`, { method: 'DELETE', headers: { cookie, 'x-cms-request': '1' } })
  return { s, cookie, get, list, upload, del }
}

/** Waits until `check` holds (the watcher reports changes asynchronously). */
async function until (t: Test, what: string, check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + 8000
  while (Date.now() < end) {
    if (await check()) { t.pass(what); return }
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  t.fail(`timed out: ${what}`)
}

function ym (): string {
  const now = new Date()
  return `${now.getUTCFullYear()}/${String(now.getUTCMonth() + 1).padStart(2, '0')}`
}

t.test('lists uploads, collection uploads folders and page-bundle images, with paging, search, sort and folders', async t => {
  const { list, upload } = await setup(t)
  const urls = [await upload('Alpha Cat.png', png(4, 4, 1)), await upload('beta dog.png', png(1, 1, 2)), await upload('gamma cat.png', png(8, 8, 3))]
  t.match(urls[0], new RegExp(`^/uploads/${ym()}/alpha-cat-[0-9a-f]{8}\\.png$`))

  const all = await list('?pageSize=200&sort=name')
  const paths = all.files.map(f => f.path)
  // The fixtures' two uploads, three new ones, the gallery's folder, one bundle image; not the stray PNG beside a plain post.
  t.equal(all.pagination.total, 7)
  t.ok(paths.includes('public/uploads/2026/01/harbour-at-dusk-340535e6.png'))
  t.notOk(paths.includes('content/blog/stray.png'), 'an image in a collection folder outside any page bundle is not listed')
  const sunset = all.files.find(f => f.path === 'static/images/sunset.png')
  t.match(sunset, { url: '/images/sunset.png', name: 'sunset.png', folder: 'static/images', type: 'image/png', collection: 'gallery' })
  const view = all.files.find(f => f.path === 'content/blog/trip/view.png')
  t.match(view, { url: 'view.png', folder: 'content/blog/trip', entry: { collection: 'blog', id: 'trip' } })
  const alpha = all.files.find(f => f.url === urls[0])
  t.equal(alpha?.size, png(4, 4, 1).length)
  t.same(all.files.map(f => f.name.toLowerCase()), [...all.files.map(f => f.name.toLowerCase())].sort(), 'sorted by name')
  t.match(all.folders, [{ path: 'content/blog/trip', count: 1 }, { path: 'public/uploads/2026/01', count: 2 }, { path: `public/uploads/${ym()}`, count: 3 }, { path: 'static/images', count: 1 }])

  const p1 = await list('?pageSize=3&sort=name&order=desc')
  const p3 = await list('?pageSize=3&sort=name&order=desc&page=3')
  t.equal(p1.files.length, 3)
  t.same(p1.pagination, { page: 1, pageSize: 3, total: 7, totalPages: 3, hasPrev: false, hasNext: true })
  t.equal(p3.files.length, 1)
  t.same(p3.pagination.hasNext, false)
  t.same([...p1.files, ...(await list('?pageSize=3&sort=name&order=desc&page=2')).files, ...p3.files].map(f => f.path), [...paths].reverse(), 'pages partition the list')

  const cats = await list('?q=CAT')
  t.same(cats.files.map(f => f.name).sort(), [urls[0]!, urls[2]!].map(u => u.split('/').pop()).sort(), 'search by name, case-insensitive')
  t.equal((await list('?q=nothing-like-this')).pagination.total, 0)

  const bySize = await list('?sort=size&order=desc')
  t.ok(bySize.files.every((f, i, a) => i === 0 || a[i - 1]!.size >= f.size), 'sorted by size, largest first')
  const small = await list('?maxSize=100')
  t.ok(small.files.every(f => f.size <= 100))
  t.ok(small.pagination.total < 7)
  const big = await list(`?minSize=${alpha!.size}`)
  t.ok(big.files.every(f => f.size >= alpha!.size))

  const byDate = await list('?sort=date')
  t.ok(byDate.files.every((f, i, a) => i === 0 || a[i - 1]!.mtime >= f.mtime), 'sorted by date, newest first')
  const today = new Date().toISOString().slice(0, 10)
  t.equal((await list(`?after=${today}&before=${today}`)).pagination.total, 7, 'all made today')
  t.equal((await list('?before=2000-01-01')).pagination.total, 0)

  const folder = await list('?folder=public/uploads')
  t.equal(folder.pagination.total, 5, 'a folder lists the files below it')
  t.equal((await list(`?folder=public/uploads/${ym()}`)).pagination.total, 3)
  t.equal((await list('?type=pdf')).pagination.total, 0)
})

t.test('files added, changed and removed outside the service are seen through the watcher', async t => {
  const { s, list } = await setup(t)
  await list()
  const file = path.join(s.repoDir, 'public/uploads/outside/added by hand.png')
  await mkdir(path.dirname(file), { recursive: true })
  await writeFile(file, png(5, 5, 5))
  await writeFile(path.join(s.repoDir, 'public/uploads/outside/notes.txt'), 'not media')
  await until(t, 'an added file is listed', async () => (await list('?q=added')).files.some(f => f.path === 'public/uploads/outside/added by hand.png' && f.url === '/uploads/outside/added by hand.png'))
  t.equal((await list('?q=notes')).pagination.total, 0, 'a text file is not media')
  const before = (await list('?q=added')).files[0]!.size
  await writeFile(file, png(20, 20, 5))
  await until(t, 'a changed file has its new size', async () => (await list('?q=added')).files[0]?.size !== before)
  await rm(file)
  await until(t, 'a removed file is gone', async () => (await list('?q=added')).pagination.total === 0)
  await rm(path.join(s.repoDir, 'public/uploads/2026'), { recursive: true })
  await until(t, 'a removed folder takes its files along', async () => (await list('?folder=public/uploads/2026/01')).pagination.total === 0)
  t.notOk((await list()).folders.some(f => f.path.startsWith('public/uploads/2026/')), 'and its folders')

  // A page bundle made outside: its image joins the library once the index file exists, and
  // leaves it when the index file goes.
  const bundle = path.join(s.repoDir, 'content/blog/new-trip')
  await mkdir(bundle, { recursive: true })
  await writeFile(path.join(bundle, 'pic.png'), png(2, 2, 11))
  await new Promise(resolve => setTimeout(resolve, 300))
  t.equal((await list('?q=pic')).pagination.total, 0, 'not a bundle yet')
  await writeFile(path.join(bundle, 'index.md'), '---\ntitle: New trip\n---\n![](pic.png)\n')
  await until(t, 'the bundle image is listed', async () => (await list('?q=pic')).files.some(f => f.path === 'content/blog/new-trip/pic.png' && f.entry?.id === 'new-trip'))
  await rm(path.join(bundle, 'index.md'))
  await until(t, 'without its index file it is not a bundle image', async () => (await list('?q=pic')).pagination.total === 0)
})

t.test('a media folder that does not exist at start joins the library with its first file', async t => {
  const { s, cookie, list } = await setup(t, { config: { collections: { ...CONFIG.collections, press: { format: 'json', uploadsDir: 'static/press', uploadsUrl: '/press' } } } })
  t.equal((await list('?folder=static/press')).pagination.total, 0)
  const fd = new FormData()
  fd.append('file', new Blob([png(3, 1, 5)], { type: 'image/png' }), 'Press kit.png')
  const res = await s.request(`${API}/upload?collection=press`, { method: 'POST', headers: { cookie, 'x-cms-request': '1' }, body: fd })
  t.equal(res.status, 200)
  const { url } = await res.json() as { url: string }
  const listed = await list('?folder=static/press')
  t.same(listed.files.map(f => [f.url, f.collection]), [[url, 'press']], 'listed at once, with its URL')
  // Watched from then on.
  await writeFile(path.join(s.repoDir, 'static/press/by-hand.png'), png(1, 1, 6))
  await until(t, 'a file added by hand is seen', async () => (await list('?folder=static/press')).pagination.total === 2)
})

t.test('the thumbnail route serves a library file with its type, and nothing else', async t => {
  const { get } = await setup(t, { before: async (repoDir) => { await writeFile(path.join(repoDir, 'static/images/logo.svg'), '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>') } })
  const svg = await get('/media/file?path=static/images/logo.svg')
  t.equal(svg.status, 200)
  t.equal(svg.headers.get('content-type'), 'image/svg+xml')
  t.match(svg.headers.get('content-security-policy'), /sandbox/, 'an SVG opened directly runs no script')
  const res = await get('/media/file?path=static/images/sunset.png')
  t.equal(res.status, 200)
  t.equal(res.headers.get('content-type'), 'image/png')
  t.equal(res.headers.get('x-content-type-options'), 'nosniff')
  t.same(Buffer.from(await res.arrayBuffer()), png(3, 3, 9))
  t.equal((await get('/media/file?path=cms.config.yaml')).status, 404)
  t.equal((await get('/media/file?path=content/blog/trip/index.md')).status, 404)
  t.equal((await get('/media/file?path=../etc/passwd')).status, 400)
})

t.test('references list entries and drafts; delete warns with them, force deletes, publish commits the removal', async t => {
  const { s, cookie, get, list, upload, del } = await setup(t, { env: { CMS_GIT_ON_PUBLISH: 'true' } })
  const harbour = 'public/uploads/2026/01/harbour-at-dusk-340535e6.png'
  const refs = await (await get(`/media/references?path=${encodeURIComponent(harbour)}`)).json()
  t.same(refs, { path: harbour, url: '/uploads/2026/01/harbour-at-dusk-340535e6.png', references: [{ collection: 'posts', id: 'editing-in-place', file: 'content/posts/editing-in-place.md' }], otherDrafts: 0 })
  const bundle = await (await get('/media/references?path=content/blog/trip/view.png')).json()
  t.same(bundle.references, [{ collection: 'blog', id: 'trip', file: 'content/blog/trip/index.md' }], 'a bundle image is referenced by its page')
  t.same((await (await get('/media/references?path=static/images/sunset.png')).json()).references, [{ collection: 'gallery', id: 'one', file: 'content/gallery/one.json' }])

  // A referenced file is refused (409 with the references), and nothing changes.
  const fp = await repoFingerprint(s.repoDir)
  const refused = await del(harbour)
  t.equal(refused.status, 409)
  t.match(await refused.json(), { code: 'media_in_use', references: [{ collection: 'posts', id: 'editing-in-place' }] })
  t.equal(await repoFingerprint(s.repoDir), fp)

  // Forced: gone from the disk and the library; the next publish commits the removal.
  const forced = await del(harbour, '&force=true')
  t.equal(forced.status, 200)
  t.match(await forced.json(), { ok: true, deleted: harbour, references: [{ collection: 'posts' }] })
  await t.rejects(stat(path.join(s.repoDir, harbour)))
  t.notOk((await list('?pageSize=200')).files.some(f => f.path === harbour))
  t.equal((await get(`/media/references?path=${encodeURIComponent(harbour)}`)).status, 404)
  const published = await s.request(`${API}/publish`, { method: 'POST', headers: writeHeaders(cookie), body: '{}' })
  t.equal(published.status, 200)
  t.match(await published.json(), { commit: /^[0-9a-f]{40}$/ })
  t.equal(git(s.repoDir, 'ls-files', '--', harbour), '', 'the removal is committed')
  t.equal(git(s.repoDir, 'status', '--porcelain', '--', harbour), '')

  // A file only a draft references: the warning names the draft.
  const url = await upload('draft only.png', png(2, 2, 42))
  const file = (await list('?q=draft-only')).files[0]!
  t.equal(file.url, url)
  t.same((await (await get(`/media/references?path=${encodeURIComponent(file.path)}`)).json()).references, [])
})

t.test('a draft that references a file is listed', async t => {
  const { cookie, get, list, upload, del, s } = await setup(t, { config: { ...CONFIG, permissions: { editor: ['*'] } } })
  const url = await upload('in a draft.png', png(2, 2, 43))
  const file = (await list('?q=in-a-draft')).files[0]!
  const saved = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'save_field', collection: 'posts', id: 'hello-world', field: 'cover', value: url }) })
  t.equal(saved.status, 200, await saved.clone().text())
  const refs = (await (await get(`/media/references?path=${encodeURIComponent(file.path)}`)).json()).references as Array<Record<string, unknown>>
  t.equal(refs.length, 1)
  t.match(refs[0], { collection: 'posts', id: 'hello-world', draft: true, editor: /.+/ })
  t.equal((await del(file.path)).status, 409)
  t.ok((await stat(path.join(s.repoDir, file.path))).isFile())
})

t.test('hostile paths, queries and requests get a clear 4xx and change nothing', async t => {
  const outside = path.join(os.tmpdir(), `git-cms-media-secret-${process.pid}.png`)
  await writeFile(outside, png(1, 1, 99))
  t.teardown(async () => { await rm(outside, { force: true }) })
  const { s, cookie, get, list, del } = await setup(t, {
    before: async (repoDir) => {
      await symlink(outside, path.join(repoDir, 'public/uploads/linked.png'))
      await symlink(os.tmpdir(), path.join(repoDir, 'public/uploads/linked-dir'))
      await writeFile(path.join(repoDir, 'public/uploads/readme.txt'), 'text')
      await writeFile(path.join(repoDir, 'public/uploads/.hidden.png'), png())
    }
  })
  const listed = (await list('?pageSize=200')).files.map(f => f.path)
  t.notOk(listed.some(p => p.includes('linked') || p.includes('readme') || p.includes('hidden')), 'links, text and hidden files are not listed')
  const fp = await repoFingerprint(s.repoDir)
  const cases: Array<[string, number]> = [
    ['../cms.config.yaml', 400],
    ['public/uploads/../../cms.config.yaml', 400],
    ['/etc/passwd', 400],
    [outside, 400],
    ['C:/Windows/win.ini', 400],
    ['__proto__', 400],
    ['public/uploads/__proto__', 400],
    ['public/uploads/a\u0000b.png', 400],
    ['public\\uploads\\x.png', 400],
    ['public/uploads/.hidden.png', 400],
    ['', 400],
    ['public/uploads/linked.png', 404],
    ['public/uploads/linked-dir/' + path.basename(outside), 404],
    ['public/uploads/readme.txt', 404],
    ['cms.config.yaml', 404],
    ['content/posts/hello-world.md', 404],
    ['content/blog/stray.png', 404],
    ['public/uploads/2026/01/no-such-file.png', 404]
  ]
  for (const [p, status] of cases) {
    const res = await del(p, '&force=true')
    t.equal(res.status, status, `DELETE ${JSON.stringify(p)}`)
    t.match(await res.json(), { error: String, code: String })
    t.equal((await get(`/media/references?path=${encodeURIComponent(p)}`)).status, status, `references ${JSON.stringify(p)}`)
    t.equal((await get(`/media/file?path=${encodeURIComponent(p)}`)).status, status, `file ${JSON.stringify(p)}`)
  }
  const harbour = 'public/uploads/2026/01/harbour-at-dusk-340535e6.png'
  t.equal((await s.request(`${API}/media?path=${harbour}&force=true`, { method: 'DELETE', headers: { cookie } })).status, 403, 'no request-forgery header')
  t.equal((await s.request(`${API}/media?path=${harbour}&force=true`, { method: 'DELETE', headers: { 'x-cms-request': '1' } })).status, 401, 'not signed in')
  t.equal((await s.request(`${API}/media`)).status, 401)
  t.equal((await del(harbour, '&force=yes')).status, 400)
  t.equal((await s.request(`${API}/media?path=${harbour}&path=${harbour}&force=true`, { method: 'DELETE', headers: { cookie, 'x-cms-request': '1' } })).status, 400, 'path given twice')
  for (const qs of ['pageSize=100000', 'pageSize=0', 'page=0', 'page=-1', 'page=abc', 'sort=mtime', 'order=up', 'type=exe', 'minSize=-1', 'after=yesterday', 'folder=../x', 'folder=__proto__', 'q=' + 'x'.repeat(201), 'sort=name&sort=size']) {
    const res = await get(`/media?${qs}`)
    t.equal(res.status, 400, `list ?${qs.slice(0, 40)}`)
    t.equal(typeof (await res.json()).error, 'string')
  }
  t.match(await (await get('/media?page=0')).json(), { error: 'page must be an integer of at least 1', field: 'page' })
  t.match(await (await get('/media?pageSize=201')).json(), { error: 'pageSize is at most 200', field: 'pageSize' })
  t.equal((await get('/media?page=1234567890')).status, 200, 'a page number of up to 15 digits is a page (empty)')
  t.equal(await repoFingerprint(s.repoDir), fp, 'nothing changed')
  t.same(await readFile(outside), png(1, 1, 99), 'the link target is untouched')
})

t.test('a media folder that is a link leaving the repository is not indexed', async t => {
  const outside = await mkdtemp(path.join(os.tmpdir(), 'git-cms-media-outside-'))
  t.teardown(async () => { await rm(outside, { recursive: true, force: true }) })
  await writeFile(path.join(outside, 'secret.png'), png(1, 1, 77))
  const { s, list, del } = await setup(t, {
    config: { collections: { ...CONFIG.collections, elsewhere: { format: 'json', uploadsDir: 'static/elsewhere', uploadsUrl: '/elsewhere' } } },
    before: async (repoDir) => { await symlink(outside, path.join(repoDir, 'static/elsewhere')) }
  })
  t.notOk((await list('?pageSize=200')).files.some(f => f.path.startsWith('static/elsewhere')))
  const fp = await repoFingerprint(s.repoDir)
  t.equal((await del('static/elsewhere/secret.png', '&force=true')).status, 404)
  t.equal(await repoFingerprint(s.repoDir), fp)
  t.same(await readFile(path.join(outside, 'secret.png')), png(1, 1, 77))
})

t.test('delete needs the delete permission under a policy', async t => {
  const { s, del } = await setup(t, { config: { ...CONFIG, permissions: { editor: ['edit', 'upload'] } } })
  const fp = await repoFingerprint(s.repoDir)
  const res = await del('content/blog/trip/view.png', '&force=true')
  t.equal(res.status, 403)
  t.equal(await repoFingerprint(s.repoDir), fp)
})
