import t from 'tap'
import { writeFileSync, mkdirSync, realpathSync } from 'node:fs'
import path from 'node:path'
import { CollectionIndex } from '../../lib/storage/collection-index.js'
import { IndexStore } from '../../lib/storage/index-store.js'
import type { Collection } from '../../lib/storage/collection-registry.js'
import { CollectionSearch } from '../../lib/search/collection-search.js'
import { parseQuery } from '../../lib/search/search-query.js'
import type { FullTextIndex } from '../../lib/search/full-text-index.js'
import { entryTerms } from '../../lib/search/entry-terms.js'
import type { EntryData } from '../../lib/content/formats.js'

const find = (text: FullTextIndex, q: string): string[] => {
  const ranked = text.search(parseQuery(q) ?? { words: [], prefixLast: false })
  return Array.from(ranked.keys, k => ranked.idOf(k)).sort()
}

t.test('a title save patches the title terms of the entry\'s overlay document: the same terms as indexing it anew', async t => {
  const repo = realpathSync(t.testdir())
  const dir = path.join(repo, 'content', 'posts')
  mkdirSync(dir, { recursive: true })
  for (let i = 0; i < 6; i++) writeFileSync(path.join(dir, `p${i}.md`), `---\ntitle: Post ${i}\n---\nCommon words and word${i}.\n`)
  const collection = { name: 'posts', dir, format: 'md', nested: false, indexFile: null, files: null, schema: null, titleField: 'title', orderField: 'order', metadata: { orderable: false } } as unknown as Collection
  const search = new CollectionSearch(collection, repo)
  const index = new CollectionIndex({ collection, repoRealDir: repo, store: new IndexStore(path.join(repo, 'state')), validate: () => [], onEntryChange: search.onEntryChange })
  search.attach(index)
  const text = await search.ready()
  const vocabulary = new Set<string>()

  /** A service write, then every term of the entry checked against a full indexing of its data. */
  const save = async (id: string, data: EntryData, what: string): Promise<void> => {
    const { body, ...front } = data
    writeFileSync(path.join(dir, `${id}.md`), `---\n${Object.entries(front).map(([k, v]) => `${k}: ${typeof v === 'bigint' ? String(v) : JSON.stringify(v)}`).join('\n')}\n---\n${String(body)}`)
    await index.recordWrite(id, data)
    // Indexed by the next read of the index.
    t.equal(await search.ready(), text)
    const expected = entryTerms(id, data, 'title')
    for (const term of expected.keys()) vocabulary.add(term)
    const doc = text.overlayDocOf(id)
    t.ok(doc >= 0, `${what}: an overlay document`)
    const wrong = [...vocabulary].filter(term => text.overlayFlags(doc, term) !== (expected.get(term) ?? 0))
    t.same(wrong, [], `${what}: every term's flags as a full indexing gives them`)
  }

  const body = 'Harbour notes, common words and a lighthouse.\n'
  await save('p1', { title: 'Alpha lighthouse', body }, 'first save (indexed in full)')
  const grown = text.overlaySize
  await save('p1', { title: 'Beta harbour', body }, 'title save')
  await save('p1', { title: 'Gamma alpha common', body }, 'title save with words of the body')
  await save('p1', { title: 'Delta', body }, 'title save dropping them')
  await save('p1', { title: 'Delta', body }, 'the same title')
  t.equal(text.overlaySize, grown, 'title saves added no overlay document')
  t.same(find(text, 'delta'), ['p1'])
  t.same(find(text, 'alpha'), [], 'the old title word is gone')
  t.same(find(text, 'gamma'), [])
  t.same(find(text, 'lighthouse'), ['p1'], 'the body still found')
  t.same(find(text, 'common').length, 6)
  t.same(find(text, 'p1'), ['p1'], 'the id stays a title term')

  await save('p1', { title: 'Delta', body: 'A new body with quince.\n' }, 'a body change (indexed in full)')
  t.ok(text.overlaySize > grown, 'a new document for a changed body')
  t.same(find(text, 'quince'), ['p1'])
  t.same(find(text, 'lighthouse'), [])
  await save('p1', { title: 'Epsilon quince', body: 'A new body with quince.\n' }, 'title save after a body change')
  const settled = text.overlaySize
  await save('p1', { title: 'Zeta', body: 'A new body with quince.\n', tags: ['kiwi'] }, 'a field added (indexed in full)')
  t.ok(text.overlaySize > settled)
  t.same(find(text, 'kiwi'), ['p1'])
  await save('p1', { title: 'Eta', body: 'A new body with quince.\n', tags: ['kiwi'] }, 'title save with the field')
  await save('p1', { title: 7 as unknown as string, body: 'A new body with quince.\n', tags: ['kiwi'] }, 'a title that is no longer a string (indexed in full)')
  await save('p1', { title: 'Theta', subtitle: 'Iota', body: 'A new body with quince.\n', tags: ['kiwi'] }, 'a title and another field')
  await save('p2', { title: 'Other entry', body: 'Common words and word2.\n' }, 'another entry')
  await save('p1', { title: 'Kappa', subtitle: 'Iota', body: 'A new body with quince.\n', tags: ['kiwi'] }, 'title save after another entry was indexed')
  t.same(find(text, 'kappa'), ['p1'])
  t.same(find(text, 'theta'), [])
  await save('p3', { title: 'Huge', count: 2n ** 70n as unknown as number, body }, 'a value JSON cannot write (indexed in full)')
  const hugeDoc = text.overlayDocOf('p3')
  await save('p3', { title: 'Huger', count: 2n ** 70n as unknown as number, body }, 'and again in full, never patched')
  t.not(text.overlayDocOf('p3'), hugeDoc, 'a new document')
  const patchedDoc = text.overlayDocOf('p1')
  await save('p1', { title: 'Mu', subtitle: 'Iota', body: 'A new body with quince.\n', tags: ['kiwi'] }, 'title save after the other entry')
  t.equal(text.overlayDocOf('p1'), patchedDoc, 'control: a title save keeps its document')
  await index.recordDelete('p1')
  await search.ready()
  t.equal(text.overlayDocOf('p1'), -1, 'removed')
  t.same(find(text, 'mu'), [])
  await save('p1', { title: 'Lambda', body }, 'back after a removal (indexed in full)')
  t.same(find(text, 'lambda'), ['p1'])
})
