import t from 'tap'
import { writeFileSync, mkdirSync, realpathSync, existsSync } from 'node:fs'
import path from 'node:path'
import { CollectionIndex } from '../../lib/storage/collection-index.js'
import { IndexStore } from '../../lib/storage/index-store.js'
import type { Collection } from '../../lib/storage/collection-registry.js'
import { CollectionSearch } from '../../lib/search/collection-search.js'
import { RACY_MS } from '../../lib/storage/file-signature.js'
import { parseQuery } from '../../lib/search/tokenize.js'

function setup (t: { testdir: () => string }, files: number): { index: CollectionIndex, search: CollectionSearch, dir: string, repo: string, open: () => { index: CollectionIndex, search: CollectionSearch } } {
  const repo = realpathSync(t.testdir())
  const dir = path.join(repo, 'content', 'posts')
  mkdirSync(dir, { recursive: true })
  for (let i = 0; i < files; i++) writeFileSync(path.join(dir, `p${String(i).padStart(4, '0')}.md`), `---\ntitle: Post ${i}\n---\nCommon words and word${i}.\n`)
  const collection = { name: 'posts', dir, format: 'md', nested: false, indexFile: null, files: null, schema: null, titleField: 'title', orderField: 'order', metadata: { orderable: false }, i18n: null } as unknown as Collection
  const open = (): { index: CollectionIndex, search: CollectionSearch } => {
    const index = new CollectionIndex({ collection, repoRealDir: repo, store: new IndexStore(path.join(repo, 'state')), validate: () => [] })
    const search = new CollectionSearch(index, path.join(repo, 'state'))
    return { index, search }
  }
  return { ...open(), dir, repo, open }
}

/** The ids a query finds, in rank order. */
async function find (search: CollectionSearch, q: string, skip: string[] = []): Promise<string[]> {
  const query = parseQuery(q)
  if (query === null) throw new Error('blank query')
  return await search.use(db => db.search(query, new Set(skip), Infinity).ids)
}

/** A write as the service makes it: the file, then the index told. */
async function write (index: CollectionIndex, dir: string, id: string, title: string, body: string): Promise<void> {
  writeFileSync(path.join(dir, `${id}.md`), `---\ntitle: ${title}\n---\n${body}`)
  await index.recordWrite(id, { title, body })
}

t.test('a search before the index is open waits for all of it; one build', async t => {
  const { search } = setup(t, 300)
  const [a, b] = await Promise.all([find(search, 'common'), find(search, 'common')])
  t.equal(a.length, 300)
  t.same(a, b)
  t.equal(search.stats.builds, 1, 'one build')
  t.same(await find(search, 'word17 '), ['p0017'], 'a whole word')
})

t.test('writes and deletions reach the index before the next search; prefixes; title matches first', async t => {
  const { index, search, dir } = setup(t, 5)
  await search.ready()
  await write(index, dir, 'p0001', 'Renamed lighthouse', 'Brand new words.\n')
  await write(index, dir, 'p0009', 'Added entry', 'Lighthousekeeper notes.\n')
  t.same(await find(search, 'word1 '), [], 'the old body')
  t.same(await find(search, 'lighthouse '), ['p0001'], 'an exact word')
  t.same(await find(search, 'lightho'), ['p0001', 'p0009'], 'a prefix, the title match first')
  await index.recordDelete('p0009')
  t.same(await find(search, 'lightho'), ['p0001'])
  t.same((await find(search, 'common', ['p0002', 'p0003'])).sort(), ['p0000', 'p0004'], 'skipped (drafted) entries left out')
  t.equal((await find(search, 'common')).length, 4, 'and back for the next search (p0001 no longer holds the word)')
  t.equal(search.stats.builds, 1, 'no rebuild')
})

t.test('a persisted index: a restart reads only what changed; the old search segments are removed', async t => {
  const { index, search, dir, repo, open } = setup(t, 40)
  await new Promise(resolve => setTimeout(resolve, RACY_MS + 50))
  await index.ready()
  t.equal((await find(search, 'common')).length, 40)
  await write(index, dir, 'p0039', 'Post 39', 'Saved while running.\n')
  await search.flush()
  t.equal(search.stats.builds, 1)
  await t.rejects(search.ready(), /closed/, 'a closed search answers nothing')

  // 20 files rewritten while "down".
  for (let i = 0; i < 20; i++) writeFileSync(path.join(dir, `p${String(i).padStart(4, '0')}.md`), `---\ntitle: Post ${i}\n---\nRewritten kumquat${i}.\n`)
  const legacy = path.join(repo, 'state', 'search')
  mkdirSync(legacy, { recursive: true })
  writeFileSync(path.join(legacy, 'posts.bin'), 'an old segment')
  const second = open()
  t.equal(existsSync(legacy), false, 'the old segment folder is gone')
  await second.index.ready()
  t.equal((await find(second.search, 'common')).length, 19, 'the old words of the rewritten files are gone')
  t.same(await find(second.search, 'kumquat7 '), ['p0007'])
  t.equal((await find(second.search, 'kumquat')).length, 20)
  t.same(await find(second.search, 'running'), ['p0039'], 'the save made while running')
  t.equal(second.search.stats.builds, 0, 'loaded, not built')
  // The 20 rewritten files, and the saved one (its signature was not recorded with its text).
  t.same(second.search.stats, { builds: 0, fromSnapshot: 19, read: 21 })
  await second.search.flush()
})

t.test('closing while the index opens: nothing rejects unhandled, and a search then says closed', async t => {
  const { search } = setup(t, 400)
  search.start()
  await search.flush()
  await t.rejects(find(search, 'common'), /closed/)
  search.start()
})

t.test('a build lets other work run between its chunks (small files are read synchronously)', async t => {
  const files = 1280
  const { index, search } = setup(t, files)
  await index.all()
  // Turns of the event loop's check phase while the full-text index builds: a request is served
  // in such a turn. Before the fix the build of every chunk ran as one task (0-3 turns).
  let turns = 0
  let building = true
  const tick = (): void => { turns++; if (building) setImmediate(tick) }
  setImmediate(tick)
  await search.ready()
  building = false
  t.equal(search.stats.builds, 1)
  t.ok(turns >= files / 64, `${turns} turns during a build of ${files / 64} chunks`)
  t.equal((await find(search, 'common')).length, files, 'every entry indexed')
})
