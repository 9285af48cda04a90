import t from 'tap'
import { writeFileSync, mkdirSync, realpathSync } from 'node:fs'
import path from 'node:path'
import { CollectionIndex } from '../../lib/storage/collection-index.js'
import { IndexStore } from '../../lib/storage/index-store.js'
import type { Collection } from '../../lib/storage/collection-registry.js'
import { CollectionSearch } from '../../lib/search/collection-search.js'
import { parseQuery } from '../../lib/search/search-query.js'
import type { FullTextIndex } from '../../lib/search/full-text-index.js'
import { readSegment, INLINE_MAX_FILES } from '../../lib/search/segment-reader.js'
import { buildSegment } from '../../lib/search/build-segment.js'
import { SearchSnapshot } from '../../lib/search/search-snapshot.js'
import { RACY_MS } from '../../lib/storage/file-signature.js'

function setup (t: { testdir: () => string }, files: number, opts: { overlayRebuild?: number } = {}): { index: CollectionIndex, search: CollectionSearch, dir: string } {
  const repo = realpathSync(t.testdir())
  const dir = path.join(repo, 'content', 'posts')
  mkdirSync(dir, { recursive: true })
  for (let i = 0; i < files; i++) writeFileSync(path.join(dir, `p${String(i).padStart(4, '0')}.md`), `---\ntitle: Post ${i}\n---\nCommon words and word${i}.\n`)
  const collection = { name: 'posts', dir, format: 'md', nested: false, indexFile: null, files: null, schema: null, titleField: 'title', orderField: 'order', metadata: { orderable: false } } as unknown as Collection
  const search = new CollectionSearch(collection, repo, opts)
  const index = new CollectionIndex({ collection, repoRealDir: repo, store: new IndexStore(path.join(repo, 'state')), validate: () => [], onEntryChange: search.onEntryChange })
  search.attach(index)
  return { index, search, dir }
}

const find = (text: FullTextIndex, q: string): string[] => {
  const ranked = text.search(parseQuery(q) ?? { words: [], prefixLast: false })
  return Array.from(ranked.keys, k => ranked.idOf(k))
}

/** A write as the service makes it: the file, then the index told. */
async function write (index: CollectionIndex, dir: string, id: string, title: string, body: string): Promise<void> {
  writeFileSync(path.join(dir, `${id}.md`), `---\ntitle: ${title}\n---\n${body}`)
  await index.recordWrite(id, { title, body })
}

t.test('a big collection is indexed in the worker: the same segment as one built in this thread', async t => {
  const { dir } = setup(t, INLINE_MAX_FILES)
  const repo = path.dirname(path.dirname(dir))
  const files: Array<[string, string]> = Array.from({ length: INLINE_MAX_FILES + 1 }, (_, i) => [`p${String(i).padStart(4, '0')}`, path.join(dir, `p${String(i).padStart(4, '0')}.md`)])
  const job = { repoRealDir: repo, files: files.reverse(), format: 'md' as const, titleField: 'title' }
  const inWorker = await readSegment(job)
  const inline = await buildSegment(job)
  t.equal(inWorker.order.length, INLINE_MAX_FILES, 'the missing file left out')
  t.same(inWorker.segment, inline.segment)
  t.same(inWorker.order, inline.order)
  t.equal(inline.order[0], INLINE_MAX_FILES, 'documents in id order (p0000 is the last file given)')
})

t.test('many changes fold into a rebuild; changes made during it are kept', async t => {
  const { index, search, dir } = setup(t, 40, { overlayRebuild: 5 })
  const text = await search.ready()
  t.equal(search.builds, 1)
  t.equal(text.size, 40)
  t.same(find(text, 'word17 '), ['p0017'])
  t.equal(find(text, 'common').length, 40)
  t.ok(search.bytes > 0)

  // 20 service writes: past 5 + 40/10 changed entries a rebuild starts in the background.
  for (let i = 0; i < 20; i++) await write(index, dir, `p${String(i).padStart(4, '0')}`, `Post ${i}`, `Rewritten text${i}.\n`)
  const during = await search.ready()
  t.same(find(during, 'text5 '), ['p0005'], 'an index serves while the rebuild runs')
  // Written while the rebuild may still read the files: replayed onto it.
  await write(index, dir, 'p0030', 'Post 30', 'Late marmalade.\n')
  await index.recordDelete('p0031')
  for (let i = 0; i < 400 && search.builds < 2; i++) await new Promise(resolve => setTimeout(resolve, 25))
  // At least one rebuild; the writes made after it started (past the threshold again)
  // may start another at once, which a fast machine finishes within one poll.
  t.ok(search.builds >= 2, `rebuilt (${search.builds - 1} rebuilds)`)
  const after = await search.ready()
  t.not(after, text, 'a new index')
  t.ok(after.overlaySize < text.overlaySize, 'the overlay folded in (but for the changes made during the rebuild)')
  t.same(find(after, 'marmalade'), ['p0030'], 'a write during the rebuild')
  t.same(find(after, 'word31 '), [], 'a deletion during the rebuild')
  t.same(find(after, 'word5 '), [], 'rewritten bodies')
  t.same(find(after, 'text19 '), ['p0019'])
  t.equal(find(after, 'common').length, 40 - 20 - 1 - 1)
})

t.test('the rebuild comes past the documented count of changed entries, or past twice as many overlay documents', async t => {
  const { index, search, dir } = setup(t, 40, { overlayRebuild: 5 })
  await index.ready()
  const text = await search.ready()
  t.equal(search.builds, 1)
  t.equal(text.overlaySize, 0, 'built from the files, nothing in the overlay')
  // The limit is 5 + 40/10 = 9 changed entries. 9 entries changed once each: 18 overlay units
  // (a new document and a dropped one each), which the old count took for past the limit.
  for (let i = 0; i < 9; i++) await write(index, dir, `p${String(i).padStart(4, '0')}`, `Post ${i}`, `Changed once${i}.\n`)
  // Recorded only (never past the limit): indexed by the next read of the index.
  t.equal(text.changedEntries, 0, 'not indexed by the saves')
  t.equal(await search.ready(), text, 'the same index, read')
  t.equal(text.changedEntries, 9, `changed ${String(text.changedEntries)} units ${String(text.overlaySize)}`)
  t.equal(text.overlaySize, 18)
  await new Promise(resolve => setTimeout(resolve, 100))
  t.equal(search.builds, 1, 'no rebuild at the limit')
  t.equal(await search.ready(), text, 'the same index')
  // One entry's body changed again and again: one changed entry more, but a new document each time.
  await write(index, dir, 'p0009', 'Post 9', 'Changed body 0.\n')
  t.equal(text.changedEntries, 10, 'past the limit of changed entries: indexed by the save, no read needed')
  for (let i = 0; i < 400 && search.builds < 2; i++) await new Promise(resolve => setTimeout(resolve, 25))
  t.equal(search.builds, 2, 'rebuilt once past the limit of changed entries')
  const after = await search.ready()
  t.same(find(after, 'once3 '), ['p0003'])

  // Past twice the limit in overlay documents with one entry only (searched after each save): rebuilt too.
  for (let i = 0; i < 25 && search.builds < 3; i++) { await write(index, dir, 'p0020', 'Post 20', `Body version${i}.\n`); await search.ready() }
  for (let i = 0; i < 400 && search.builds < 3; i++) await new Promise(resolve => setTimeout(resolve, 25))
  t.equal(search.builds, 3, 'rebuilt past twice the limit in overlay documents')
  t.ok((await search.ready()).changedEntries <= 1, 'from one changed entry')
  t.same(find(await search.ready(), 'version24 '), ['p0020'])
})

t.test('a search before the index is built waits for all of it', async t => {
  const { search } = setup(t, 30)
  const [a, b] = await Promise.all([search.ready(), search.ready()])
  t.equal(a, b, 'one build')
  t.equal(a.size, 30)
  t.equal(find(a, 'common').length, 30)
})

t.test('the overlay: changed entries replace their old terms; prefixes reach changed entries; drafts rank on the same scale', async t => {
  const { index, search, dir } = setup(t, 5)
  const text = await search.ready()
  await write(index, dir, 'p0001', 'Renamed lighthouse', 'Brand new words.\n')
  await write(index, dir, 'p0009', 'Added entry', 'Lighthousekeeper notes.\n')
  t.equal(await search.ready(), text, 'the changes indexed by a read')
  t.same(find(text, 'word1 '), [], 'the old body')
  t.same(find(text, 'lighthouse '), ['p0001'], 'an exact word')
  t.same(find(text, 'lightho'), ['p0001', 'p0009'], 'a prefix, the title match first')
  await index.recordDelete('p0009')
  await search.ready()
  t.same(find(text, 'lightho'), ['p0001'])
  t.equal(text.has('p0009'), false)
  t.equal(text.has('p0001'), true)
  const query = parseQuery('common') ?? { words: [], prefixLast: false }
  const ranked = text.search(query, new Set(['p0002', 'p0003']))
  t.same(Array.from(ranked.keys, k => ranked.idOf(k)).sort(), ['p0000', 'p0004'], 'drafted entries left out')
  t.equal(text.search(query).keys.length, 4, 'and back for the next search (p0001 no longer holds the word)')
  t.equal(text.rankTerms(query, new Map([['other', 4]])), null)
  t.match(text.rankTerms(query, new Map([['common', 1]])), { tier: 0 })
})

t.test('a loaded segment whose files changed a lot while down is rebuilt (and right meanwhile)', async t => {
  const repo = realpathSync(t.testdir())
  const dir = path.join(repo, 'content', 'posts')
  mkdirSync(dir, { recursive: true })
  for (let i = 0; i < 40; i++) writeFileSync(path.join(dir, `p${String(i).padStart(4, '0')}.md`), `---\ntitle: Post ${i}\n---\nCommon words and word${i}.\n`)
  await new Promise(resolve => setTimeout(resolve, RACY_MS + 50))
  const collection = { name: 'posts', dir, format: 'md', nested: false, indexFile: null, files: null, schema: null, titleField: 'title', orderField: 'order', metadata: { orderable: false } } as unknown as Collection
  const open = (): { index: CollectionIndex, search: CollectionSearch } => {
    const search = new CollectionSearch(collection, repo, { overlayRebuild: 5, snapshot: new SearchSnapshot(path.join(repo, 'state'), collection, repo) })
    const index = new CollectionIndex({ collection, repoRealDir: repo, store: new IndexStore(path.join(repo, 'state')), validate: () => [], onEntryChange: search.onEntryChange })
    search.attach(index)
    return { index, search }
  }
  const first = open()
  // As the service does (warm, q): the collection index first, then its search.
  await first.index.ready()
  t.equal(find(await first.search.ready(), 'common').length, 40)
  await first.search.flush()
  t.equal(first.search.builds, 1)

  // 20 files rewritten while "down": past 5 + 40/10 changed entries.
  for (let i = 0; i < 20; i++) writeFileSync(path.join(dir, `p${String(i).padStart(4, '0')}.md`), `---\ntitle: Post ${i}\n---\nRewritten kumquat${i}.\n`)
  const second = open()
  await second.index.ready()
  const loaded = await second.search.ready()
  t.same(second.search.loadStats, { fromSnapshot: 20, read: 20 })
  t.equal(second.search.builds, 0, 'loaded, not built')
  t.equal(find(loaded, 'common').length, 20, 'the old words of the rewritten files are gone')
  t.same(find(loaded, 'kumquat7 '), ['p0007'])
  for (let i = 0; i < 400 && second.search.builds < 1; i++) await new Promise(resolve => setTimeout(resolve, 25))
  t.equal(second.search.builds, 1, 'a rebuild folded the overlay in')
  const rebuilt = await second.search.ready()
  t.equal(rebuilt.overlaySize, 0)
  t.equal(find(rebuilt, 'common').length, 20)
  t.equal(find(rebuilt, 'kumquat').length, 20)
})
