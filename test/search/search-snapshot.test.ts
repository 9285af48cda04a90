import t from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { SearchSnapshot } from '../../lib/search/search-snapshot.js'
import { SegmentBuilder } from '../../lib/search/search-segment.js'
import { entryTerms } from '../../lib/search/entry-terms.js'
import type { Collection } from '../../lib/storage/collection-registry.js'

const collection = { name: 'posts', dir: 'content/posts', format: 'md', nested: false, indexFile: null, files: null, titleField: 'title', orderField: 'order', schema: null } as unknown as Collection

t.test('a written segment reads back equal, its arrays views of one buffer; another repository path is not read', async t => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'search-snapshot-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  const builder = new SegmentBuilder()
  const ids = ['alpha', 'bravo', 'café']
  for (const id of ids) builder.add(entryTerms(id, { title: `Title of ${id}`, body: `Über ${id} words words 東京` }, 'title'))
  const segment = builder.finish()
  const snapshot = new SearchSnapshot(dir, collection, '/repo')
  await snapshot.write({ segment, ids, sigs: ['1:2:3:4', '', '5:6:7:8'] })
  const back = await snapshot.read()
  t.ok(back !== null)
  t.same(back?.ids, ids)
  t.same(back?.sigs, ['1:2:3:4', '', '5:6:7:8'])
  t.equal(back?.segment.dict, segment.dict)
  t.equal(back?.segment.docs, 3)
  for (const key of ['termStart', 'postStart', 'bodyStart', 'df', 'bodyLen', 'postings'] as const) {
    t.same(Array.from(back?.segment[key] ?? []), Array.from(segment[key]), key)
    t.equal(back?.segment[key].buffer, back?.segment.postings.buffer, `${key} is a view of the one arrays buffer`)
  }
  t.equal(await new SearchSnapshot(dir, collection, '/elsewhere').read(), null, 'another repository path')
  t.equal(await new SearchSnapshot(dir, { ...collection, titleField: 'name' } as Collection, '/repo').read(), null, 'another definition')
})
