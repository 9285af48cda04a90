import t from 'tap'
import { writeFileSync, mkdirSync, realpathSync } from 'node:fs'
import path from 'node:path'
import { startServer, writeHeaders, type TestServer } from '../helpers/site.js'
import { CollectionSearch } from '../../lib/search/collection-search.js'
import { CollectionIndex } from '../../lib/storage/collection-index.js'
import { IndexStore } from '../../lib/storage/index-store.js'
import type { Collection } from '../../lib/storage/collection-registry.js'
import { parseQuery } from '../../lib/search/tokenize.js'

// The full-text index catches up with the entry index before each search once it changed: a
// search right after a save still sees it.

const API = '/api/cms'

const files = {
  'content/articles/alpha.md': '---\ntitle: Harbour lights\n---\nThe lighthouse keeper counts gulls.\n',
  'content/articles/beta.md': '---\ntitle: Quay\n---\nA walrus sleeps on the quay.\n',
  'content/articles/gamma.md': '---\ntitle: Garden\n---\nTulips in deep winter.\n'
}

async function q (s: TestServer, cookie: string, words: string): Promise<string[]> {
  const res = await s.request(`${API}/entries?collection=articles&q=${encodeURIComponent(words)}`, { headers: { cookie } })
  t.equal(res.status, 200)
  return ((await res.json()) as { entries: Array<{ id: string }> }).entries.map(e => e.id).sort()
}

async function mutate (s: TestServer, cookie: string, body: unknown): Promise<void> {
  const res = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })
  if (res.status !== 200) throw new Error(`mutate: ${res.status} ${await res.text()}`)
}

t.test('a search right after a save or a deletion sees it; five saves of an entry before a search: the last one counts', async t => {
  const s = await startServer(t, { files })
  const cookie = await s.login()
  t.same(await q(s, cookie, 'lighthouse'), ['alpha'], 'index built')

  await mutate(s, cookie, { type: 'put_entry', collection: 'articles', id: 'alpha', data: { title: 'Harbour lights', body: 'Now about a windmill.\n' } })
  t.same(await q(s, cookie, 'windmill'), ['alpha'], 'the saved word, at once')
  t.same(await q(s, cookie, 'lighthouse'), [], 'the saved-over word is gone')
  t.same(await q(s, cookie, 'harbour'), ['alpha'], 'the title kept')

  await mutate(s, cookie, { type: 'delete_entry', collection: 'articles', id: 'gamma' })
  t.same(await q(s, cookie, 'tulips'), [], 'a deleted entry, at once')

  for (let i = 0; i < 5; i++) await mutate(s, cookie, { type: 'put_entry', collection: 'articles', id: 'beta', data: { title: 'Quay', body: `Version word${i} of the text.\n` } })
  t.same(await q(s, cookie, 'word4'), ['beta'], 'the last save')
  for (let i = 0; i < 4; i++) t.same(await q(s, cookie, `word${i} `), [], `an earlier save's word${i} is gone`)
  t.same(await q(s, cookie, 'walrus'), [])
})

t.test('many more saves than a chunk before a search: it sees every one', async t => {
  const repo = realpathSync(t.testdir())
  const dir = path.join(repo, 'content', 'posts')
  mkdirSync(dir, { recursive: true })
  const count = 1200
  const name = (i: number): string => `p${String(i).padStart(4, '0')}`
  for (let i = 0; i < count; i++) writeFileSync(path.join(dir, `${name(i)}.md`), `---\ntitle: Post ${i}\n---\nCommon words and word${i}.\n`)
  const collection = { name: 'posts', dir, format: 'md', nested: false, indexFile: null, files: null, schema: null, titleField: 'title', orderField: 'order', metadata: { orderable: false }, i18n: null } as unknown as Collection
  const index = new CollectionIndex({ collection, repoRealDir: repo, store: new IndexStore(path.join(repo, 'state')), validate: () => [] })
  const search = new CollectionSearch(index, path.join(repo, 'state'))
  await search.ready()
  for (let i = 0; i < count; i++) {
    const title = `Post ${i}`
    const body = i % 2 === 0 ? `Rewritten even${i}.\n` : `Rewritten odd${i}.\n`
    writeFileSync(path.join(dir, `${name(i)}.md`), `---\ntitle: ${title}\n---\n${body}`)
    await index.recordWrite(name(i), { title, body })
  }
  await index.recordDelete(name(1))
  const find = async (words: string): Promise<string[]> => await search.use(db => db.search(parseQuery(words) ?? { words: [], prefixLast: false }, new Set(), Infinity).ids.sort())
  t.same(await find('common'), [], 'no old body left')
  t.same(await find('even1198 '), [name(1198)])
  t.same(await find('odd1199 '), [name(1199)])
  t.same(await find('odd1 '), [], 'the deletion after the bound')
  t.same(await find('odd3 '), [name(3)])
  t.equal((await find('rewritten')).length, count - 1)
  t.equal(search.stats.builds, 1)
})
