import t, { type Test } from 'tap'
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { SearchSnapshot } from '../../lib/search/search-snapshot.js'
import { SearchSegment, SegmentBuilder, type SegmentData } from '../../lib/search/search-segment.js'
import { SegmentFileChanged, SMALL_SEGMENT_BYTES } from '../../lib/search/segment-file.js'
import { FullTextIndex } from '../../lib/search/full-text-index.js'
import { entryTerms } from '../../lib/search/entry-terms.js'
import { parseQuery } from '../../lib/search/search-query.js'
import type { Collection } from '../../lib/storage/collection-registry.js'

const collection = { name: 'posts', dir: 'content/posts', format: 'md', nested: false, indexFile: null, files: null, titleField: 'title', orderField: 'order', schema: null } as unknown as Collection

const ARRAYS = ['termStart', 'postStart', 'bodyStart', 'df'] as const

async function tempDir (t: Test): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'search-snapshot-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  return dir
}

/** A segment of `docs` documents: common words, and words of their own (many terms). */
function build (docs: number, ownWords: number): { segment: SegmentData, ids: string[] } {
  const builder = new SegmentBuilder()
  const ids = Array.from({ length: docs }, (_, i) => `doc-${String(i).padStart(6, '0')}`)
  for (const [i, id] of ids.entries()) {
    const own = Array.from({ length: ownWords }, (_, w) => `w${i}x${w}`).join(' ')
    builder.add(entryTerms(id, { title: `Title ${i % 7 === 0 ? 'walrus' : 'heron'}`, body: `Über ${own} common words 東京 ${i % 3 === 0 ? 'lantern' : 'tulip'}` }, 'title'))
  }
  return { segment: builder.finish(), ids }
}

/** Every query's ranked ids over an index. */
function answers (index: FullTextIndex, queries: string[]): string[][] {
  return queries.map(q => {
    const ranked = index.search(parseQuery(q) ?? { words: [], prefixLast: false }, new Set(), 50)
    return [String(ranked.total), ...Array.from(ranked.keys, k => ranked.idOf(k))]
  })
}

const QUERIES = ['walrus', 'lantern', 'common words', 'heron tulip', 'w1', 'w12x', 'w99x3', 'tok', 'nothing']

t.test('a small segment reads back equal and keeps nothing but its body lengths; searches read it from the file', async t => {
  const dir = await tempDir(t)
  const { segment, ids } = build(3, 2)
  const snapshot = new SearchSnapshot(dir, collection, '/repo')
  await snapshot.write({ segment, ids, sigs: ['1:2:3:4', '', '5:6:7:8'] })
  const back = await snapshot.read()
  if (back === null) throw new Error('not read back')
  t.same(back.ids, ids)
  t.same(back.sigs, ['1:2:3:4', '', '5:6:7:8'])
  t.equal(back.segment.docs, 3)
  t.equal(back.segment.data, null, 'the arrays are not kept')
  t.same(Array.from(back.segment.bodyLen), Array.from(segment.bodyLen))
  t.equal(back.segment.bytes, segment.bodyLen.byteLength, 'only the body lengths are in memory')
  const view = back.segment.open()
  t.equal(view.dict, segment.dict)
  for (const key of ARRAYS) t.same(Array.from(view[key]), Array.from(segment[key]), key)
  t.same(Array.from(view.postings(0, segment.postings.byteLength)), Array.from(segment.postings))
  view.close()
  t.same(answers(new FullTextIndex(back.segment, back.ids), QUERIES), answers(new FullTextIndex(new SearchSegment(segment), ids), QUERIES), 'the same answers as from memory')
  t.equal(await new SearchSnapshot(dir, collection, '/elsewhere').read(), null, 'another repository path')
  t.equal(await new SearchSnapshot(dir, { ...collection, titleField: 'name' } as Collection, '/repo').read(), null, 'another definition')
})

t.test('a big segment keeps its term arrays and reads its postings a chunk at a time', async t => {
  const dir = await tempDir(t)
  const { segment, ids } = build(3000, 12)
  t.ok(segment.termStart.byteLength * 4 > SMALL_SEGMENT_BYTES, 'big enough')
  const snapshot = new SearchSnapshot(dir, collection, '/repo')
  const source = await snapshot.write({ segment, ids, sigs: ids.map(() => '') })
  t.ok(source.bytes > 0, 'the written file keeps the term arrays of a big segment')
  const back = await snapshot.read()
  if (back === null) throw new Error('not read back')
  t.equal(back.segment.bytes, source.bytes + segment.bodyLen.byteLength, 'term arrays and body lengths in memory, not the postings')
  const view = back.segment.open()
  for (const key of ARRAYS) t.same(Array.from(view[key]), Array.from(segment[key]), key)
  t.equal(view.dict, segment.dict)
  const n = segment.postings.byteLength
  t.same(Array.from(view.postings(n - 100, n)), Array.from(segment.postings.subarray(n - 100, n)), 'positioned read')
  view.close()
  const memory = answers(new FullTextIndex(new SearchSegment(segment), ids), QUERIES)
  t.same(answers(new FullTextIndex(back.segment, back.ids), QUERIES), memory, 'loaded: the same answers as from memory')
  // A segment switched to its written file answers the same too.
  const switched = new SearchSegment(build(3000, 12).segment)
  switched.useSource(source)
  t.equal(switched.data, null)
  t.same(answers(new FullTextIndex(switched, ids), QUERIES), memory, 'written then read from the file: the same answers')
})

t.test('a search over a file that changed, was replaced or went away raises SegmentFileChanged', async t => {
  const dir = await tempDir(t)
  for (const [docs, own] of [[3, 2], [3000, 12]]) {
    const { segment, ids } = build(docs as number, own as number)
    const snapshot = new SearchSnapshot(dir, collection, '/repo')
    await snapshot.write({ segment, ids, sigs: ids.map(() => '') })
    const good = await readFile(snapshot.file)
    const breakers: Array<[string, () => Promise<void>]> = [
      ['the same bytes in a new file', async () => { await writeFile(snapshot.file + '.new', good); await rename(snapshot.file + '.new', snapshot.file) }],
      ['rewritten in place', async () => { await writeFile(snapshot.file, good) }],
      ['cut short', async () => { await writeFile(snapshot.file, good.subarray(0, good.length - 10)) }],
      ['removed', async () => { await rm(snapshot.file) }]
    ]
    for (const [name, breakIt] of breakers) {
      await writeFile(snapshot.file, good)
      const back = await snapshot.read()
      if (back === null) throw new Error('not read back')
      const index = new FullTextIndex(back.segment, back.ids)
      t.equal(index.search(parseQuery('walrus') ?? { words: [], prefixLast: false }).total > 0, true, `${docs} docs: searches before`)
      // Timestamps of a rewrite within the same clock tick: wait for the next one.
      await new Promise(resolve => setTimeout(resolve, 20))
      await breakIt()
      t.throws(() => index.search(parseQuery('walrus') ?? { words: [], prefixLast: false }), SegmentFileChanged, `${docs} docs, ${name}: raises`)
      t.throws(() => index.rankTerms(parseQuery('walrus') ?? { words: [], prefixLast: false }, new Map([['walrus', 1]])), SegmentFileChanged, `${docs} docs, ${name}: drafts' ranking raises too`)
    }
  }
})
