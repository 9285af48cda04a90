/**
 * The Studio's unsaved-changes records (lib/browser/studio/unsaved.ts): keys that cannot collide
 * for ids holding `/`, `:`, spaces and apostrophes, and the diff a form keeps and restores.
 */
import t from 'tap'
import { applyRecord, diffValues, unsavedKey, UNSAVED_PREFIX } from '../../lib/browser/studio/unsaved.js'

t.test('keys encode collection and id, so no two entries share one', async t => {
  t.equal(unsavedKey('posts', "2024/it's a post"), `${UNSAVED_PREFIX}posts:2024%2Fit's%20a%20post`)
  t.not(unsavedKey('a:b', 'c'), unsavedKey('a', 'b:c'))
  t.not(unsavedKey('posts', 'a/b'), unsavedKey('posts/a', 'b'))
  t.not(unsavedKey('posts', 'x y'), unsavedKey('posts', 'x%20y'))
})

t.test('diffValues keeps only changed fields; applyRecord puts them over the saved values', async t => {
  const loaded = { title: 'T', body: 'B', date: '2024-01-01', tags: ['a'], legacy: 1 }
  const values = { title: 'T', body: 'B typed', date: undefined, tags: ['a', 'b'], legacy: 1 }
  const d = diffValues(loaded, values)
  t.same(d, { changes: { body: 'B typed', tags: ['a', 'b'] }, cleared: ['date'] })
  t.same(diffValues(loaded, { ...loaded }), { changes: {}, cleared: [] })
  const now = { title: 'T2', body: 'B', date: '2024-02-02', tags: [], legacy: 2 }
  const restored = applyRecord(now, { revision: 1, at: 0, ...d })
  t.same(restored, { title: 'T2', body: 'B typed', date: undefined, tags: ['a', 'b'], legacy: 2 })
  t.equal(now.body, 'B', 'the saved values are not changed')
})
