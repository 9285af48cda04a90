import t from 'tap'
import { SortedRowsCache, sortRows, type SortSpec } from '../../lib/commands/list-order.js'
import type { IndexRow } from '../../lib/storage/collection-index.js'

function row (id: string, fields: Record<string, unknown>): IndexRow {
  return { id, file: `/x/${id}.md`, sig: '1', revision: 1, fields, title: typeof fields.title === 'string' ? fields.title : id, order: null }
}

/** A small deterministic generator, so a failure is the same on every run. */
function random (seed: number): () => number {
  let s = seed >>> 0
  return () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 4294967296 }
}

const ids = (rows: readonly IndexRow[]): string => rows.map(r => r.id).join(',')

t.test('the cached order is reused for the same rows and revision, and rebuilt after a change', async t => {
  const cache = new SortedRowsCache()
  const rows = [row('a', { rank: 3 }), row('b', { rank: 1 }), row('c', { rank: 2 })]
  const spec: SortSpec = { field: 'rank', direction: 'asc' }
  const first = cache.sorted('p', rows, 3, spec)
  t.equal(ids(first), 'b,c,a')
  t.equal(cache.sorted('p', rows, 3, spec), first, 'the same array: not sorted again')
  t.ok(cache.has('p', rows, 3, spec))
  t.notOk(cache.has('p', rows, 4, spec))
  t.notOk(cache.has('q', rows, 3, spec), 'per collection')
  rows[1] = row('b', { rank: 9 })
  const second = cache.sorted('p', rows, 4, spec)
  t.not(second, first)
  t.equal(ids(second), 'c,a,b')
  t.equal(ids(first), 'b,c,a', 'a returned order is never changed afterwards')
})

t.test('updates after replaced, changed-in-place, added and deleted rows give the same order as a full sort', async t => {
  const next = random(7)
  const titles = ['apple', 'Banana', 'cherry', 'Éclair', 'Post 9', 'Post 10', 'post 2', '']
  const value = (): Record<string, unknown> => {
    const r = next()
    const fields: Record<string, unknown> = { title: titles[Math.floor(next() * titles.length)] }
    if (r < 0.3) fields.date = `2024-0${1 + Math.floor(next() * 9)}-1${Math.floor(next() * 10)}`
    else if (r < 0.6) fields.date = Math.floor(next() * 5)
    else if (r < 0.7) fields.date = next() < 0.5
    return fields
  }
  for (const spec of [{ field: 'date', direction: 'asc' }, { field: 'date', direction: 'desc' }, { field: 'title', direction: 'asc' }] as SortSpec[]) {
    const cache = new SortedRowsCache()
    let rows: IndexRow[] = Array.from({ length: 300 }, (_, i) => row(`e${i}`, value()))
    let revision = 1
    t.equal(ids(cache.sorted('p', rows, revision, spec)), ids(sortRows(rows, spec)))
    let counter = 300
    for (let step = 0; step < 60; step++) {
      rows = rows.slice()
      const n = 1 + Math.floor(next() * 4)
      for (let k = 0; k < n; k++) {
        const i = Math.floor(next() * rows.length)
        const op = next()
        if (op < 0.3) rows[i] = row((rows[i] as IndexRow).id, value())
        else if (op < 0.55) (rows[i] as IndexRow).fields = value()
        else if (op < 0.8) rows.push(row(`n${counter++}`, value()))
        else rows.splice(i, 1)
      }
      revision++
      t.equal(ids(cache.sorted('p', rows, revision, spec)), ids(sortRows(rows, spec)), `${spec.field} ${spec.direction} step ${step}`)
    }
    // Many changes at once: sorted afresh, still the same order.
    rows = rows.map(r => row(r.id, value()))
    t.equal(ids(cache.sorted('p', rows, ++revision, spec)), ids(sortRows(rows, spec)), 'after every row changed')
  }
})
