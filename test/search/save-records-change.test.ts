import t from 'tap'
import { writeFileSync, mkdirSync, realpathSync } from 'node:fs'
import path from 'node:path'
import { startServer, writeHeaders, type TestServer } from '../helpers/site.js'
import { searchOf, CollectionSearch } from '../../lib/search/collection-search.js'
import { CollectionIndex } from '../../lib/storage/collection-index.js'
import { IndexStore } from '../../lib/storage/index-store.js'
import type { Collection } from '../../lib/storage/collection-registry.js'
import { parseQuery } from '../../lib/search/search-query.js'
import type { FullTextIndex } from '../../lib/search/full-text-index.js'

// A save only records the entry's data; the full-text index takes it (tokenizing it once) at the
// next read of the index: a search right after a save still sees it, and an entry saved again
// and again before a search is indexed once.

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

t.test('a search right after a save or a deletion sees it; five saves of an entry before a search index it once', async t => {
  const s = await startServer(t, { files })
  const cookie = await s.login()
  t.same(await q(s, cookie, 'lighthouse'), ['alpha'], 'index built')
  const search = searchOf(await s.services.content.index('articles'))
  if (search === undefined) throw new Error('no search')
  const text = await search.ready()
  t.equal(text.overlaySize, 0, 'nothing changed yet')

  await mutate(s, cookie, { type: 'put_entry', collection: 'articles', id: 'alpha', data: { title: 'Harbour lights', body: 'Now about a windmill.\n' } })
  t.same(await q(s, cookie, 'windmill'), ['alpha'], 'the saved word, at once')
  t.same(await q(s, cookie, 'lighthouse'), [], 'the saved-over word is gone')
  t.same(await q(s, cookie, 'harbour'), ['alpha'], 'the title kept')

  await mutate(s, cookie, { type: 'delete_entry', collection: 'articles', id: 'gamma' })
  t.same(await q(s, cookie, 'tulips'), [], 'a deleted entry, at once')

  // Five saves of one entry's body, each with another word, then one search. The build's persist
  // (200 ms after it) reads the index too: it is done first, or on a loaded machine it fell
  // between two of the saves and indexed them (CI, stop 26).
  await search.settled()
  const before = text.overlaySize
  for (let i = 0; i < 5; i++) await mutate(s, cookie, { type: 'put_entry', collection: 'articles', id: 'beta', data: { title: 'Quay', body: `Version word${i} of the text.\n` } })
  t.equal(text.overlaySize, before, 'the saves indexed nothing')
  t.same(await q(s, cookie, 'word4'), ['beta'], 'the last save')
  for (let i = 0; i < 4; i++) t.same(await q(s, cookie, `word${i} `), [], `an earlier save's word${i} is gone`)
  t.same(await q(s, cookie, 'walrus'), [])
  // Tokenized once: one overlay document and the segment's one dropped (five, one per save, before).
  t.equal(text.overlaySize, before + 2, `indexed once (${text.overlaySize - before} overlay units)`)
  t.equal(text.changedEntries, 3, 'alpha, gamma and beta changed')
})

const find = (text: FullTextIndex, words: string): string[] => {
  const ranked = text.search(parseQuery(words) ?? { words: [], prefixLast: false })
  return Array.from(ranked.keys, k => ranked.idOf(k)).sort()
}

t.test('saves past the bound are indexed without a read; a search then sees every one', async t => {
  const repo = realpathSync(t.testdir())
  const dir = path.join(repo, 'content', 'posts')
  mkdirSync(dir, { recursive: true })
  const count = 4200
  const name = (i: number): string => `p${String(i).padStart(4, '0')}`
  for (let i = 0; i < count; i++) writeFileSync(path.join(dir, `${name(i)}.md`), `---\ntitle: Post ${i}\n---\nCommon words and word${i}.\n`)
  const collection = { name: 'posts', dir, format: 'md', nested: false, indexFile: null, files: null, schema: null, titleField: 'title', orderField: 'order', metadata: { orderable: false } } as unknown as Collection
  // A rebuild threshold no save reaches here: only the bound on recorded saves drains them.
  const search = new CollectionSearch(collection, repo, { overlayRebuild: 1_000_000 })
  const index = new CollectionIndex({ collection, repoRealDir: repo, store: new IndexStore(path.join(repo, 'state')), validate: () => [], onEntryChange: search.onEntryChange })
  search.attach(index)
  const text = await search.ready()
  t.equal(text.size, count)
  for (let i = 0; i < count; i++) {
    const title = `Post ${i}`
    const body = i % 2 === 0 ? `Rewritten even${i}.\n` : `Rewritten odd${i}.\n`
    writeFileSync(path.join(dir, `${name(i)}.md`), `---\ntitle: ${title}\n---\n${body}`)
    await index.recordWrite(name(i), { title, body })
  }
  await index.recordDelete(name(1))
  const indexed = text.changedEntries
  t.ok(indexed >= 4000 && indexed < count, `indexed by the bound, without a read (${indexed} of ${count + 1} changes)`)
  t.equal(await search.ready(), text, 'the same index (no rebuild)')
  t.equal(text.changedEntries, count, 'every change indexed by the read')
  t.same(find(text, 'common'), [], 'no old body left')
  t.same(find(text, 'even4198 '), [name(4198)])
  t.same(find(text, 'odd4199 '), [name(4199)])
  t.same(find(text, 'odd1 '), [], 'the deletion after the bound')
  t.same(find(text, 'odd3 '), [name(3)])
  t.equal(find(text, 'rewritten').length, count - 1)
  t.equal(search.builds, 1)
})
