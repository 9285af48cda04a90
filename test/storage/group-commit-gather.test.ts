import t from 'tap'
import { mkdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { makeRepo, gitIn } from '../helpers/git-repo.js'
import { PackStore } from '../../lib/storage/pack-store.js'
import { RefTreeStore, type DocCodec, type TreeUpdate } from '../../lib/storage/ref-tree-store.js'

// After a group of several saves lands, the saves its clients send next come back one by one: the
// next group waits a moment for as many of them as that group held instead of forming a group of one
// and another for the rest. A lone saver never waits.

type Doc = { n: number }
const numbers: DocCodec<Doc> = { decode: (text) => JSON.parse(text) as Doc, encode: (doc) => `${JSON.stringify(doc)}\n` }
const bump = (id: string): TreeUpdate<Doc> => ({ type: 'update', collection: 'c', id, update: (cur) => ({ n: (cur?.n ?? 0) + 1 }) })
const tick = async (): Promise<void> => { await new Promise(resolve => setImmediate(resolve)) }

/** Four savers on four entries: one round in one tick, then each saver's next save a tick after the one before. */
async function rounds (gatherMs: number): Promise<{ commits: number, files: string[] }> {
  const { dir, gitDir } = makeRepo(t)
  const packs = new PackStore(gitDir)
  packs.group.gatherMaxMs = gatherMs
  const store = new RefTreeStore({ gitDir, ref: 'refs/cms/test', codec: numbers, message: 'test', packs })
  const content = path.join(dir, 'content')
  mkdirSync(content, { recursive: true })
  const ids = ['a', 'b', 'c', 'd']
  await Promise.all(ids.map(async id => { await packs.group.submit(store, [bump(id)], [{ path: path.join(content, id), data: '1\n' }]) }))
  const second: Array<Promise<void>> = []
  for (const id of ids) {
    second.push(packs.group.submit(store, [bump(id)], [{ path: path.join(content, id), data: '2\n' }]))
    await tick()
  }
  await Promise.all(second)
  await packs.idle()
  const commits = Number(gitIn(dir, ['rev-list', '--count', 'refs/cms/test']).trim())
  t.equal(gitIn(dir, ['fsck', '--no-progress', '--strict', '--no-dangling']), '')
  return { commits, files: ids.map(id => readFileSync(path.join(content, id), 'utf8')) }
}

t.test('saves arriving one by one after a group of four ride in one group', async t => {
  const { commits, files } = await rounds(2_000)
  t.equal(commits, 2, 'one commit per round')
  t.same(files, ['2\n', '2\n', '2\n', '2\n'])
})

t.test('without the wait, the first of them forms a group of its own', async t => {
  const { commits, files } = await rounds(0)
  t.ok(commits > 2, `${commits} commits`)
  t.same(files, ['2\n', '2\n', '2\n', '2\n'])
})

t.test('the wait ends at its bound when fewer saves come, and a lone saver never waits', async t => {
  const { dir, gitDir } = makeRepo(t)
  const packs = new PackStore(gitDir)
  packs.group.gatherMaxMs = 300
  const store = new RefTreeStore({ gitDir, ref: 'refs/cms/test', codec: numbers, message: 'test', packs })
  await Promise.all(['a', 'b'].map(async id => { await packs.group.submit(store, [bump(id)]) }))
  // One save comes back of the two: it waits for the other up to the bound, then lands alone.
  let started = performance.now()
  await packs.group.submit(store, [bump('a')])
  t.ok(performance.now() - started >= 250, 'waited for the bound')
  // That group held one save: the next lone save does not wait.
  started = performance.now()
  await packs.group.submit(store, [bump('a')])
  t.ok(performance.now() - started < 250, 'a lone saver does not wait')
  await packs.idle()
  t.equal(gitIn(dir, ['rev-list', '--count', 'refs/cms/test']).trim(), '3')
})
