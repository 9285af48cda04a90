/**
 * Creating translations, refusals that change nothing, and Eleventy's `---js` front matter over
 * HTTP: the starter-shaped site's content readable 7 of 7, a title save in a `---js` file changes
 * one line, and front matter that would have to run (a call, a getter) is an unreadable entry whose
 * code never runs.
 */
import t, { type Test } from 'tap'
import { cp, readFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { initSite } from '../../lib/init/init-site.js'
import { git, makeSite, repoFingerprint, startServer, writeHeaders, type TestServer } from '../helpers/site.js'
import { changedLines } from '../helpers/text-diff.js'
import { fromRoot } from '../helpers/repo-root.js'

const FIXTURES = fromRoot('test/fixtures/')
const API = '/api/cms'

async function siteServer (t: Test, fixture: string, files: Record<string, string> = {}): Promise<{ s: TestServer, cookie: string, get: (q: string) => Promise<{ status: number, body: any }>, mutate: (body: unknown) => Promise<{ status: number, body: any }> }> {
  const repo = await makeSite(t, files, { fixtures: false, commit: false })
  await cp(path.join(FIXTURES, fixture), repo, { recursive: true })
  await initSite({ repoDir: repo, force: false })
  git(repo, 'add', '-A')
  git(repo, 'commit', '-q', '-m', fixture)
  const s = await startServer(t, { repoDir: repo })
  const cookie = await s.login()
  const get = async (q: string): Promise<{ status: number, body: any }> => {
    const res = await s.request(`${API}/entries?${q}`, { headers: { cookie } })
    return { status: res.status, body: await res.json() }
  }
  const mutate = async (body: unknown): Promise<{ status: number, body: any }> => {
    const res = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })
    return { status: res.status, body: await res.json() }
  }
  return { s, cookie, get, mutate }
}

t.test('docsy-shaped Hugo site: locale filter, a new translation, refusals that write nothing', async t => {
  const { s, get, mutate } = await siteServer(t, 'i18n-docsy')
  const no = await get('collection=pages&locale=no&pageSize=100')
  t.equal(no.status, 200)
  t.equal(no.body.pagination.total, 7, 'Norwegian: 7 entries')
  t.ok(no.body.entries.every((e: { locale: string }) => e.locale === 'no'), 'only Norwegian')

  const fingerprint = await repoFingerprint(s.repoDir)
  for (const locale of ['de', '../', '__proto__', 'en/../no', '']) {
    if (locale === '') continue
    const res = await get(`collection=pages&locale=${encodeURIComponent(locale)}`)
    t.equal(res.status, 400, `locale=${locale}: 400`)
    t.match(res.body.error, /locale/)
  }
  const refused = [
    { id: 'de/docs/_index', why: 'a locale the site does not have' },
    { id: 'docs/_index', why: 'outside every locale folder' },
    { id: '../fa/docs/x', why: 'a hostile path' },
    { id: '__proto__/docs/x', why: 'a prototype key' }
  ]
  for (const { id, why } of refused) {
    const res = await mutate({ type: 'put_entry', collection: 'pages', id, data: { title: 'x', body: 'x\n' } })
    t.equal(res.status, 400, `${why}: 400`)
  }
  t.equal(await repoFingerprint(s.repoDir), fingerprint, 'nothing written by any refused request')

  // Translating: the id the layout gives the key in that locale.
  const source = await get('collection=pages&id=' + encodeURIComponent('en/docs/getting-started/_index'))
  t.same(source.body.entries[0].translations, { en: 'en/docs/getting-started/_index', no: 'no/docs/getting-started/_index' })
  const created = await mutate({ type: 'put_entry', collection: 'pages', id: 'fa/docs/getting-started/_index', data: { title: 'شروع کنید', weight: 2, body: 'بخوانید.\n' } })
  t.equal(created.status, 200)
  t.equal(await readFile(path.join(s.repoDir, 'content/fa/docs/getting-started/_index.md'), 'utf8'), '---\ntitle: شروع کنید\nweight: 2\n---\nبخوانید.\n')
  const again = await get('collection=pages&id=' + encodeURIComponent('en/docs/getting-started/_index'))
  t.same(again.body.entries[0].translations, { en: 'en/docs/getting-started/_index', no: 'no/docs/getting-started/_index', fa: 'fa/docs/getting-started/_index' })
  const fa = await get('collection=pages&id=' + encodeURIComponent('fa/docs/getting-started/_index'))
  t.match(fa.body.entries[0], { locale: 'fa', translationKey: 'docs/getting-started/_index' })
  t.equal(fa.body.entries[0].data.locale, undefined, 'locale is not inside data')
})

t.test('a locale= on a collection of one language, and the suffix layout\'s new translation', async t => {
  const { s, get, mutate } = await siteServer(t, 'i18n-hugo-suffix')
  const created = await mutate({ type: 'put_entry', collection: 'posts', id: 'only-english.fr', data: { title: 'Seulement en anglais', date: '2024-05-02', body: 'Pas encore.\n' } })
  t.equal(created.status, 200)
  t.ok(existsSync(path.join(s.repoDir, 'content/posts/only-english.fr.md')))
  const fr = await get('collection=posts&locale=fr')
  t.same(fr.body.entries.map((e: { id: string }) => e.id).sort(), ['_index.fr', 'hello.fr', 'only-english.fr'])
  const schema = await (await s.request(`${API}/schema?collection=posts`, { headers: { cookie: (await s.login()) } })).json()
  t.same(schema.i18n, { locales: ['en', 'fr'], layout: 'suffix', rootLocale: null, prefixes: {} })
})

t.test('Eleventy starter: ---js front matter readable, a title save changes one line, code never runs', async t => {
  const marker = path.join(os.tmpdir(), `git-cms-js-${process.pid}-${Date.now()}`)
  const { s, get, mutate } = await siteServer(t, 'i18n-eleventy')
  let readable = 0
  let total = 0
  for (const collection of ['pages', 'blog']) {
    const { body } = await get(`collection=${collection}&pageSize=100`)
    for (const e of body.entries) { total++; if (e.readError === undefined) readable++ }
  }
  t.equal(readable, 7)
  t.equal(total, 7)
  // init inferred `pages` from 404.md, about.md and index.md: Eleventy's per-page switches are never required.
  const schema = await (await s.request(`${API}/schema?collection=pages`, { headers: { cookie: await s.login() } })).json()
  t.ok(schema.schema.properties.permalink !== undefined && Array.isArray(schema.schema.required), 'init inferred permalink as a property, with a required list')
  for (const key of ['permalink', 'eleventyExcludeFromCollections', 'layout']) t.notOk(schema.schema?.required?.includes(key), `${key} is not required`)
  const page = await mutate({ type: 'put_entry', collection: 'pages', id: 'contact', data: { title: 'Contact', body: 'Write to us.\n' } })
  t.equal(page.status, 200, 'a page with a title and a body is created')
  const about = await get('collection=pages&id=about')
  t.same(about.body.entries[0].data.eleventyNavigation, { key: 'About', order: 3 })
  const index = await get('collection=pages&id=index')
  t.match(index.body.entries[0].data, { title: 'Eleventy Base Blog', numberOfLatestPostsToShow: 3 })

  const before = await readFile(path.join(s.repoDir, 'content/about.md'), 'utf8')
  t.equal((await mutate({ type: 'save_field', collection: 'pages', id: 'about', field: 'title', value: 'About me' })).status, 200)
  const diff = changedLines(before, await readFile(path.join(s.repoDir, 'content/about.md'), 'utf8'))
  t.same(diff, { removed: ['\ttitle: "About",\n'], added: ['\ttitle: "About me",\n'] }, 'one line changed')
  const beforeIndex = await readFile(path.join(s.repoDir, 'content/index.md'), 'utf8')
  t.equal((await mutate({ type: 'save_field', collection: 'pages', id: 'index', field: 'title', value: 'My Blog' })).status, 200)
  const indexDiff = changedLines(beforeIndex, await readFile(path.join(s.repoDir, 'content/index.md'), 'utf8'))
  t.same(indexDiff, { removed: ['const title = `Eleventy Base Blog`;\n'], added: ['const title = `My Blog`;\n'] }, 'one line changed')
  t.comment(`figure: Eleventy starter content readable ${readable}/${total}; a title save in a ---js file changed ${diff.added.length} line (object form) and ${indexDiff.added.length} line (declarations)`)

  // Hostile ---js: a call and a getter are unreadable entries with the reason; nothing runs.
  const write = async (name: string, front: string): Promise<void> => {
    const res = await mutate({ type: 'put_entry', collection: 'pages', id: name, data: { title: 'x', body: 'x\n' } })
    t.equal(res.status, 200)
    const { writeFile } = await import('node:fs/promises')
    await writeFile(path.join(s.repoDir, `content/${name}.md`), `---js\n${front}\n---\nbody\n`)
  }
  await write('call', `{ title: require('fs').writeFileSync(${JSON.stringify(marker)}, 'pwned') }`)
  await write('getter', `{ get title () { require('fs').writeFileSync(${JSON.stringify(marker)}, 'pwned'); return 'x' } }`)
  await write('iife', `const title = (() => require('fs').writeFileSync(${JSON.stringify(marker)}, 'pwned'))()`)
  for (const [id, reason] of [['call', /function call/], ['getter', /getter/], ['iife', /function call/]] as const) {
    const read = await get(`collection=pages&id=${id}`)
    t.equal(read.status, 422, `${id}: unreadable`)
    t.match(read.body.readError?.message, reason, `${id}: the reason`)
    const save = await mutate({ type: 'save_field', collection: 'pages', id, field: 'title', value: 'y' })
    t.equal(save.status, 422, `${id}: save refused`)
  }
  t.notOk(existsSync(marker), 'no front matter code ever ran')
})
