/**
 * The Studio's unsaved-changes records (lib/browser/studio/unsaved.ts): keys that cannot collide
 * for ids holding `/`, `:`, spaces and apostrophes, and the diff a form keeps and restores.
 */
import t from 'tap'
import { applyRecord, diffValues, unsavedRecords } from '../../lib/browser/studio/unsaved.js'

const unsavedKey = (collection: string, id: string): string => unsavedRecords.key(collection, id)

t.test('keys encode collection and id, so no two entries share one', async t => {
  t.equal(unsavedKey('posts', "2024/it's a post"), `git-cms:unsaved:v1:posts:2024%2Fit's%20a%20post`)
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

t.test('a kept record is read back; a damaged, oversized or 30-day-old one is not', async t => {
  // A Storage-like object whose items are its own properties (as localStorage's are).
  class FakeStorage {
    getItem (key: string): string | null { return Object.hasOwn(this, key) ? (this as unknown as Record<string, string>)[key]! : null }
    setItem (key: string, value: string): void { (this as unknown as Record<string, string>)[key] = value }
    removeItem (key: string): void { delete (this as unknown as Record<string, string>)[key] }
  }
  const store = new FakeStorage()
  Object.defineProperty(globalThis, 'localStorage', { value: store, configurable: true })
  t.teardown(() => { delete (globalThis as { localStorage?: unknown }).localStorage })
  const key = unsavedKey('posts', 'a')
  const record = { revision: 3, at: Date.now(), changes: { title: 'T' }, cleared: [] }
  t.ok(unsavedRecords.keep(key, record))
  t.same(unsavedRecords.read(key), record)
  t.same(unsavedRecords.fresh().map(r => r.key), [key])
  t.notOk(unsavedRecords.keep(unsavedKey('posts', 'big'), { ...record, changes: { body: 'x'.repeat(1_000_001) } }), 'too long to keep')
  store.setItem(unsavedKey('posts', 'damaged'), '{"revision":"3"')
  store.setItem(unsavedKey('posts', 'empty'), JSON.stringify({ ...record, changes: {} }))
  store.setItem(unsavedKey('posts', 'old'), JSON.stringify({ ...record, at: Date.now() - 31 * 24 * 3600 * 1000 }))
  store.setItem('other-app', 'x')
  t.equal(unsavedRecords.read(unsavedKey('posts', 'damaged')), null)
  t.equal(unsavedRecords.read(unsavedKey('posts', 'empty')), null, 'a record without changes is none')
  t.same(unsavedRecords.fresh().map(r => r.key), [key], 'the others are forgotten')
  t.same(Object.keys(store).sort(), [key, 'other-app'])
  t.ok(unsavedRecords.keep(key, null))
  t.equal(unsavedRecords.read(key), null, 'keeping null forgets')
  unsavedRecords.later(() => { unsavedRecords.keep(key, record) })
  t.equal(unsavedRecords.read(key), null, 'a later write waits')
  unsavedRecords.flush()
  t.same(unsavedRecords.read(key), record, 'flush writes it at once')
  unsavedRecords.later(() => { unsavedRecords.keep(key, null) })
  unsavedRecords.drop()
  await new Promise(resolve => setTimeout(resolve, 400))
  t.same(unsavedRecords.read(key), record, 'a dropped write never happens')
})
