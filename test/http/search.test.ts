import t from 'tap'
import { writeFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { startServer, repoFingerprint, writeHeaders, type TestServer } from '../helpers/site.js'

const API = '/api/cms'

interface Found { id: string, draft?: boolean, snippet?: { field: string, text: string, marks: Array<[number, number]> } }
interface ListBody { entries: Found[], pagination: { total: number } }

async function search (s: TestServer, cookieOrHeaders: string | Record<string, string>, q: string, collection = 'articles'): Promise<ListBody> {
  const headers = typeof cookieOrHeaders === 'string' ? { cookie: cookieOrHeaders } : cookieOrHeaders
  const res = await s.request(`${API}/entries?collection=${collection}&q=${encodeURIComponent(q)}`, { headers })
  if (res.status !== 200) throw new Error(`search ${q}: ${res.status} ${await res.text()}`)
  return await res.json() as ListBody
}

const ids = (body: ListBody): string[] => body.entries.map(e => e.id)
const marked = (f: Found): string[] => (f.snippet?.marks ?? []).map(([a, b]) => f.snippet?.text.slice(a, b) ?? '')

const posts = {
  'content/articles/alpha.md': '---\ntitle: Harbour lights\ntags:\n  - boats\n---\nA quiet evening. The lighthouse keeper wrote about zanzibar and the sea.\n',
  'content/articles/beta.md': '---\ntitle: Zanzibar travel notes\n---\nNothing else here.\n',
  'content/articles/gamma.md': '---\ntitle: Garden\nseo:\n  description: Growing tulips in deep winter\n  nested:\n    - note: a saffron crocus\n---\nBody about soil.\n',
  'content/articles/post-00042.md': '---\ntitle: Numbered post\n---\nText.\n',
  'content/articles/post-00420.md': '---\ntitle: Another numbered post\n---\nText.\n',
  'content/articles/unicode.md': '---\ntitle: Café crème\n---\nÜber naïve façade — 東京 and Ærøskøbing.\n'
}

t.test('q finds words in bodies and nested fields, ranks title matches first, and gives a snippet', async t => {
  const s = await startServer(t, { files: posts })
  const cookie = await s.login()

  const body = await search(s, cookie, 'lighthouse')
  t.same(ids(body), ['alpha'], 'a body-only word')
  t.equal(body.entries[0]?.snippet?.field, 'body')
  t.match(body.entries[0]?.snippet?.text, /The lighthouse keeper/)
  t.same(marked(body.entries[0] as Found), ['lighthouse'])
  t.equal(body.pagination.total, 1)

  const both = await search(s, cookie, 'zanzibar')
  t.same(ids(both), ['beta', 'alpha'], 'the title match ranks before the body match')
  t.equal(both.entries[0]?.snippet?.field, 'title')
  t.same(marked(both.entries[0] as Found), ['Zanzibar'])

  const nested = await search(s, cookie, 'crocus')
  t.same(ids(nested), ['gamma'], 'a string nested in an object in an array')
  t.equal(nested.entries[0]?.snippet?.field, 'seo.nested.0.note')
  t.same(ids(await search(s, cookie, 'tulips winter')), ['gamma'], 'two words, both in one field')
  t.same(ids(await search(s, cookie, 'tulips soil')), ['gamma'], 'two words in different fields')
  t.same(ids(await search(s, cookie, 'tulips zanzibar')), [], 'every word must match')
  t.same(ids(await search(s, cookie, 'boats')), ['alpha'], 'a tag')

  // Prefixes of the last word (what the Studio user is typing), ids and their parts.
  t.same(ids(await search(s, cookie, 'lightho')), ['alpha'])
  t.same(ids(await search(s, cookie, 'harb')), ['alpha'])
  t.same(ids(await search(s, cookie, 'post-00042')), ['post-00042'], 'an exact id')
  t.same(ids(await search(s, cookie, 'post-0004')), ['post-00042'], 'a partial id')
  t.same(ids(await search(s, cookie, 'numbered')).sort(), ['post-00042', 'post-00420'])
  t.same(ids(await search(s, cookie, 'NUMBERED Post')).sort(), ['post-00042', 'post-00420'], 'case-insensitive')

  // Unicode: accents folded both ways, non-Latin words.
  t.same(ids(await search(s, cookie, 'cafe')), ['unicode'])
  t.same(ids(await search(s, cookie, 'crème')), ['unicode'])
  t.same(ids(await search(s, cookie, 'uber')), ['unicode'])
  const kanji = await search(s, cookie, '東京')
  t.same(ids(kanji), ['unicode'])
  t.same(marked(kanji.entries[0] as Found), ['東京'])
  t.same(ids(await search(s, cookie, 'ærøskøbing')), ['unicode'])
})

t.test('hostile q: too long is a 400 that changes nothing; metacharacters, __proto__ and blanks are plain text', async t => {
  const s = await startServer(t, { files: posts })
  const cookie = await s.login()
  const before = await repoFingerprint(s.repoDir)
  const long = await s.request(`${API}/entries?collection=articles&q=${'a'.repeat(201)}`, { headers: { cookie } })
  t.equal(long.status, 400)
  t.match(await long.json(), { error: /at most 200/ })
  t.equal((await s.request(`${API}/entries?collection=articles&q=a&q=b`, { headers: { cookie } })).status, 400, 'q twice')
  t.equal((await search(s, cookie, 'a'.repeat(200))).pagination.total, 0, '200 characters are accepted')
  for (const q of ['.*', '(', '[a-z]+', '\\', '$^|?', '*', '%', '"\'', '__proto__', 'constructor', 'prototype', 'hasOwnProperty', '\u0000']) {
    t.same(ids(await search(s, cookie, q)), [], `q=${JSON.stringify(q)}`)
  }
  // A lone surrogate and bytes that are no UTF-8 at all (decoded as replacement characters).
  for (const raw of ['%ED%A0%80', '%FF%FE', '%C0%AF']) {
    const res = await s.request(`${API}/entries?collection=articles&q=${raw}`, { headers: { cookie } })
    t.equal(res.status, 200, raw)
    t.same((await res.json()).entries, [], raw)
  }
  t.same(ids(await search(s, cookie, 'zanzibar.*')), ['beta', 'alpha'], 'metacharacters around a word are separators')
  t.same(ids(await search(s, cookie, '   ')).length, 6, 'a blank q lists everything')
  t.same(ids(await search(s, cookie, '')).length, 6, 'an empty q lists everything')
  t.same(ids(await search(s, cookie, 'a b c d e f g h i j k l zanzibar')), [], 'words past the eighth are ignored (and the first ones must match)')
  t.equal(await repoFingerprint(s.repoDir), before, 'searching changed nothing')
})

t.test('the index follows outside edits (watcher) and service writes and deletions', async t => {
  const s = await startServer(t, { files: posts })
  const cookie = await s.login()
  t.same(ids(await search(s, cookie, 'lighthouse')), ['alpha'], 'index built')

  // An outside edit while serving: the new word is found once the watcher saw it, the old one is gone.
  await writeFile(path.join(s.repoDir, 'content/articles/alpha.md'), '---\ntitle: Harbour lights\n---\nNow about a windmill.\n')
  let found: string[] = []
  for (let i = 0; i < 100 && found.length === 0; i++) { await sleep(50); found = ids(await search(s, cookie, 'windmill')) }
  t.same(found, ['alpha'], 'the new body word')
  t.same(ids(await search(s, cookie, 'lighthouse')), [], 'the old body word no longer matches')
  // An outside new file and an outside deletion.
  await writeFile(path.join(s.repoDir, 'content/articles/delta.md'), '---\ntitle: Delta\n---\nAnother windmill.\n')
  await rm(path.join(s.repoDir, 'content/articles/gamma.md'))
  for (let i = 0; i < 100 && found.length < 2; i++) { await sleep(50); found = ids(await search(s, cookie, 'windmill')) }
  t.same(found.sort(), ['alpha', 'delta'])
  t.same(ids(await search(s, cookie, 'crocus')), [], 'a deleted file is gone')

  // Files a sync rewrote (git fast-forward): the sync names them, and the next q sees them at once.
  await writeFile(path.join(s.repoDir, 'content/articles/beta.md'), '---\ntitle: Zanzibar travel notes\n---\nFetched from the remote: a gazebo.\n')
  s.services.content.markPathsChanged(['content/articles/beta.md'])
  t.same(ids(await search(s, cookie, 'gazebo')), ['beta'], 'a synced change')

  // Service writes: found at once (no watcher needed).
  const mutate = async (body: unknown): Promise<number> => (await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })).status
  t.equal(await mutate({ type: 'put_entry', collection: 'articles', id: 'epsilon', data: { title: 'Epsilon', body: 'The marmalade recipe.\n' } }), 200)
  t.same(ids(await search(s, cookie, 'marmalade')), ['epsilon'], 'a created entry')
  t.equal(await mutate({ type: 'save_field', collection: 'articles', id: 'epsilon', field: 'body', value: 'The chutney recipe.\n' }), 200)
  t.same(ids(await search(s, cookie, 'chutney')), ['epsilon'], 'a saved field')
  t.same(ids(await search(s, cookie, 'marmalade')), [], 'the saved-over word')
  t.equal(await mutate({ type: 'delete_entry', collection: 'articles', id: 'epsilon' }), 200)
  t.same(ids(await search(s, cookie, 'chutney')), [], 'a deleted entry')
})

t.test('an empty collection finds nothing; an unknown collection is a 404', async t => {
  const s = await startServer(t, { files: { 'content/articles/only.md': '---\ntitle: Only\n---\nOne.\n' } })
  const cookie = await s.login()
  // Known before it is emptied: a folder first seen empty is not a collection (it would be a 404).
  t.equal((await search(s, cookie, 'only')).pagination.total, 1)
  await rm(path.join(s.repoDir, 'content/articles/only.md'))
  let total = 1
  for (let i = 0; i < 100 && total > 0; i++) { total = (await search(s, cookie, 'only')).pagination.total; if (total > 0) await sleep(50) }
  t.equal(total, 0)
  t.equal((await s.request(`${API}/entries?collection=nope&q=x`, { headers: { cookie } })).status, 404)
})

t.test('drafts are searched with their draft data, for their editor only', async t => {
  const config = {
    auth: { provider: 'trusted-header' as const, idHeader: 'x-user', nameHeader: 'x-user-name', rolesHeader: 'x-user-roles' },
    permissions: { writer: ['edit' as const, 'delete' as const] },
    collections: { articles: { format: 'md' as const } }
  }
  const s = await startServer(t, { config, files: posts })
  const ann = { 'x-user': 'ann', 'x-user-name': 'Ann', 'x-user-roles': 'writer' }
  const bob = { 'x-user': 'bob', 'x-user-name': 'Bob', 'x-user-roles': 'writer' }
  const mutate = async (body: unknown): Promise<number> => (await s.request(`${API}/mutate`, { method: 'POST', headers: { ...ann, 'content-type': 'application/json', 'x-cms-request': '1' }, body: JSON.stringify(body) })).status
  t.equal(await mutate({ type: 'save_field', collection: 'articles', id: 'beta', field: 'body', value: 'A drafted pelican.\n' }), 200)
  t.equal(await mutate({ type: 'put_entry', collection: 'articles', id: 'omega', data: { title: 'Omega pelican', body: 'New.\n' } }), 200)
  t.equal(await mutate({ type: 'delete_entry', collection: 'articles', id: 'alpha' }), 200)

  const annPelican = await search(s, ann, 'pelican')
  t.same(ids(annPelican), ['omega', 'beta'], 'the draft title match first, then the draft body')
  t.same(annPelican.entries.map(e => e.draft), [true, true])
  t.equal(annPelican.entries[1]?.snippet?.field, 'body')
  t.same(ids(await search(s, ann, 'zanzibar')), ['beta'], 'a drafted entry still matches its title; a draft deletion hides the entry')
  t.same(ids(await search(s, ann, 'nothing')), [], 'the base body a draft replaced does not match')
  t.same(ids(await search(s, bob, 'pelican')), [], 'nobody else sees the drafts')
  t.same(ids(await search(s, bob, 'zanzibar')), ['beta', 'alpha'])
})

t.test('pages of results: totals, ranks and the page size', async t => {
  const files: Record<string, string> = {}
  for (let i = 0; i < 30; i++) files[`content/notes/n-${String(i).padStart(2, '0')}.json`] = JSON.stringify(i % 3 === 0 ? { title: `Shared word ${i}` } : { title: `Note ${i}`, text: `shared ${'filler '.repeat(i)}` }) + '\n'
  const s = await startServer(t, { files })
  const cookie = await s.login()
  const res = await s.request(`${API}/entries?collection=notes&q=shared&pageSize=7&page=2`, { headers: { cookie } })
  const page = await res.json() as ListBody & { pagination: { total: number, totalPages: number, hasNext: boolean } }
  t.equal(page.pagination.total, 30)
  t.equal(page.pagination.totalPages, 5)
  t.equal(page.entries.length, 7)
  const all = await s.request(`${API}/entries?collection=notes&q=shared&pageSize=100`, { headers: { cookie } })
  const ranked = ids(await all.json() as ListBody)
  t.same(ranked.slice(0, 10).sort(), Array.from({ length: 10 }, (_, i) => `n-${String(i * 3).padStart(2, '0')}`), 'the ten title matches first')
  t.same(ids(page), ranked.slice(7, 14), 'page 2 continues the ranking')
  t.equal(ranked[10], 'n-01', 'then the field matches, the shortest text first')
})
