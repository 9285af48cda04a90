import t from 'tap'
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { makeRepo, gitIn } from '../helpers/git-repo.js'
import { PackStore } from '../../lib/storage/pack-store.js'
import { HistoryStore, HISTORY_REF, type Snapshot } from '../../lib/storage/history-store.js'
import { DraftStore, draftRef, type DraftRecord } from '../../lib/storage/draft-store.js'
import { RefTreeStore, type DocCodec, type TreeUpdate } from '../../lib/storage/ref-tree-store.js'
import type { RefSource } from '../../lib/storage/group-commit.js'
import type { ObjectBatch } from '../../lib/storage/object-batch.js'
import { readRef } from '../../lib/storage/git-refs.js'
import { TEMP_PREFIX } from '../../lib/storage/atomic-write.js'

const snapshot = (n: number): Omit<Snapshot, 'ts'> => ({ data: { n }, action: 'save', editor: { id: 'ed', name: 'Ed' }, revision: n })
const record = (id: string, n: number): DraftRecord => ({ version: 1, collection: 'notes', id, kind: 'put', data: { n }, baseRevision: 1, revision: 2, updatedAt: 1 })
const packsIn = (gitDir: string): string[] => {
  try { return readdirSync(path.join(gitDir, 'objects', 'pack')).filter(f => f.endsWith('.pack')) } catch { return [] }
}
const leftovers = (dir: string): string[] => readdirSync(dir).filter(f => f.startsWith(TEMP_PREFIX))

t.test('saves on the history ref and on two draft refs in one tick share one pack; each ref gets its commit, files land', async t => {
  const { dir, gitDir } = makeRepo(t)
  const packs = new PackStore(gitDir)
  const history = new HistoryStore({ gitDir, packs })
  const drafts = new DraftStore({ gitDir, packs })
  const content = path.join(dir, 'content', 'notes')
  mkdirSync(content, { recursive: true })
  writeFileSync(path.join(content, 'a.json'), '{"n":1}\n')
  const before = packsIn(gitDir).length
  await Promise.all([
    history.append([{ collection: 'notes', id: 'a', snapshot: snapshot(1) }], [{ path: path.join(content, 'a.json'), data: '{"n":2}\n' }]),
    history.append([], [{ path: path.join(content, 'new.json'), data: '{"n":7}\n' }]),
    drafts.put('alice', [record('a', 3)]),
    drafts.put('bob', [record('b', 4)])
  ])
  t.equal(packsIn(gitDir).length, before + 1, 'one pack for the whole group')
  t.equal(readFileSync(path.join(content, 'a.json'), 'utf8'), '{"n":2}\n', 'the entry file was replaced')
  t.equal(readFileSync(path.join(content, 'new.json'), 'utf8'), '{"n":7}\n', 'a file without a snapshot was written too')
  t.same((await history.list('notes', 'a')).map(s => s.data), [{ n: 1 }])
  t.same((await drafts.get('alice', 'notes', 'a'))?.data, { n: 3 })
  t.same((await drafts.get('bob', 'notes', 'b'))?.data, { n: 4 })
  for (const ref of [HISTORY_REF, draftRef('alice'), draftRef('bob')]) {
    t.equal(gitIn(dir, ['rev-list', '--count', ref]), '1', `${ref}: one commit`)
  }
  t.same(leftovers(content), [])
  t.equal(gitIn(dir, ['fsck', '--no-progress', '--strict', '--no-dangling']), '')
})

/** A ref store that lets an outside writer move its ref while our group is being built. */
class RacedSource<T> implements RefSource {
  races = 0
  constructor (private readonly inner: RefTreeStore<T>, private readonly outside: () => Promise<void>) {}
  get ref (): string { return this.inner.ref }
  async build (head: string | null, jobs: ReadonlyArray<ReadonlyArray<TreeUpdate<T>>>, batch: ObjectBatch): Promise<{ commit: string | null, failed: Map<number, unknown> }> {
    const built = await this.inner.build(head, jobs, batch)
    if (this.races-- > 0) await this.outside()
    return built
  }
}

const numbers: DocCodec<{ n: number }> = { decode: (text) => JSON.parse(text) as { n: number }, encode: (doc) => `${JSON.stringify(doc)}\n` }

t.test('when an outside writer moves one ref of a group, the other refs land at once and the moved one is rebuilt on it', async t => {
  const { dir, gitDir } = makeRepo(t)
  const packs = new PackStore(gitDir)
  const history = new HistoryStore({ gitDir, packs })
  const ref = 'refs/cms/drafts/raced'
  const ours = new RefTreeStore({ gitDir, ref, codec: numbers, message: 'ours', packs })
  // The outside writer is another instance (its own packs and group commit) on the same ref.
  const theirs = new RefTreeStore({ gitDir, ref, codec: numbers, message: 'theirs', packs: new PackStore(gitDir) })
  const raced = new RacedSource(ours, async () => { await theirs.update([{ type: 'update', collection: 'c', id: 'outside', update: (cur) => ({ n: (cur?.n ?? 0) + 1 }) }]) })
  raced.races = 2
  const content = path.join(dir, 'content')
  mkdirSync(content, { recursive: true })
  const file = path.join(content, 'x.json')
  let historyLanded = false
  let oursLanded = false
  const outcome = await Promise.all([
    history.append([{ collection: 'notes', id: 'h', snapshot: snapshot(1) }]).then(() => { historyLanded = true; return oursLanded }),
    packs.group.submit(raced, [{ type: 'update', collection: 'c', id: 'mine', update: (cur: { n: number } | null) => ({ n: (cur?.n ?? 0) + 1 }) }], [{ path: file, data: 'mine\n' }])
      .then(() => { oursLanded = true; return historyLanded })
  ])
  t.same(outcome, [false, true], 'the history ref landed in the first group, before the raced ref was retried')
  t.equal(raced.races, -1, 'the raced ref was built three times (two conflicts)')
  t.same((await ours.list()).map(d => `${d.id}=${d.doc.n}`), ['mine=1', 'outside=2'], 'built on the outside commits, nothing lost')
  t.equal(gitIn(dir, ['rev-list', '--count', ref]), '3', 'the two outside commits, then ours on top')
  t.equal(readFileSync(file, 'utf8'), 'mine\n', 'its file is placed once its ref landed')
  t.same((await history.list('notes', 'h')).map(s => s.data), [{ n: 1 }])
  t.same(leftovers(content), [])
})

t.test('a group that cannot write its pack changes no ref and no file, and leaves no temporary file', async t => {
  const { dir, gitDir } = makeRepo(t)
  // objects/pack is a file: the pack cannot be staged.
  rmSync(path.join(gitDir, 'objects', 'pack'), { recursive: true, force: true })
  writeFileSync(path.join(gitDir, 'objects', 'pack'), 'not a directory')
  const packs = new PackStore(gitDir)
  const history = new HistoryStore({ gitDir, packs })
  const drafts = new DraftStore({ gitDir, packs })
  const content = path.join(dir, 'content')
  mkdirSync(content, { recursive: true })
  writeFileSync(path.join(content, 'a.json'), 'old\n')
  const results = await Promise.allSettled([
    history.append([{ collection: 'notes', id: 'a', snapshot: snapshot(1) }], [{ path: path.join(content, 'a.json'), data: 'new\n' }]),
    drafts.put('alice', [record('a', 3)])
  ])
  t.same(results.map(r => r.status), ['rejected', 'rejected'])
  t.equal(readFileSync(path.join(content, 'a.json'), 'utf8'), 'old\n', 'the entry file is untouched')
  t.equal(await readRef(gitDir, HISTORY_REF), null)
  t.equal(await readRef(gitDir, draftRef('alice')), null)
  t.same(leftovers(content), [])
  const locks = (() => { try { return readdirSync(path.join(gitDir, 'refs'), { recursive: true }).map(String).filter(f => f.endsWith('.lock')) } catch { return [] } })()
  t.same(locks, [], 'no lock left')
})

t.test('a failing update function fails its own job only: its file is not placed, the others are', async t => {
  const { dir, gitDir } = makeRepo(t)
  const packs = new PackStore(gitDir)
  const store = new RefTreeStore({ gitDir, ref: 'refs/cms/test', codec: numbers, message: 'test', packs })
  const content = path.join(dir, 'content')
  mkdirSync(content, { recursive: true })
  const results = await Promise.allSettled([
    store.update([{ type: 'update', collection: 'c', id: 'a', update: () => ({ n: 1 }) }], [{ path: path.join(content, 'a'), data: 'a\n' }]),
    store.update([
      { type: 'update', collection: 'c', id: 'b', update: () => ({ n: 2 }) },
      { type: 'update', collection: 'c', id: 'bad', update: () => { throw new Error('refused') } }
    ], [{ path: path.join(content, 'b'), data: 'b\n' }]),
    store.update([{ type: 'update', collection: 'c', id: 'c', update: () => ({ n: 3 }) }], [{ path: path.join(content, 'c'), data: 'c\n' }])
  ])
  t.same(results.map(r => r.status), ['fulfilled', 'rejected', 'fulfilled'])
  t.same((await store.list()).map(d => d.id), ['a', 'c'], 'the failed job left nothing on the ref (not even its first update)')
  t.same(readdirSync(content).sort(), ['a', 'c'], 'its file was not placed, and no temporary file is left')
})

t.test('a job whose file fails after its group built the commit: that group does not land, the other jobs are rebuilt and land without it', async t => {
  const { dir, gitDir } = makeRepo(t)
  const packs = new PackStore(gitDir)
  const history = new HistoryStore({ gitDir, packs })
  const content = path.join(dir, 'content')
  mkdirSync(content, { recursive: true })
  writeFileSync(path.join(content, 'a.json'), 'a1\n')
  // A regular file where the folder of `bad` should be: creating its file fails (ENOTDIR), which
  // the thread pool reports after the group has started building.
  writeFileSync(path.join(content, 'blocked'), 'a file, not a folder\n')
  const results = await Promise.allSettled([
    history.append([{ collection: 'notes', id: 'a', snapshot: snapshot(1) }], [{ path: path.join(content, 'a.json'), data: 'a2\n' }]),
    history.append([{ collection: 'notes', id: 'bad', snapshot: snapshot(2) }], [{ path: path.join(content, 'blocked', 'bad.json'), data: 'x\n' }]),
    history.append([{ collection: 'notes', id: 'c', snapshot: snapshot(3) }], [{ path: path.join(content, 'c.json'), data: 'c\n' }])
  ])
  t.same(results.map(r => r.status), ['fulfilled', 'rejected', 'fulfilled'])
  t.match((results[1] as PromiseRejectedResult).reason, { code: 'ENOTDIR' })
  t.equal(readFileSync(path.join(content, 'a.json'), 'utf8'), 'a2\n')
  t.equal(readFileSync(path.join(content, 'c.json'), 'utf8'), 'c\n')
  t.same((await history.list('notes', 'a')).map(s => s.data), [{ n: 1 }])
  t.same(await history.list('notes', 'bad'), [], 'the failed save left no snapshot')
  t.same((await history.list('notes', 'c')).map(s => s.data), [{ n: 3 }])
  t.equal(gitIn(dir, ['rev-list', '--count', HISTORY_REF]), '1', 'one commit: the group that held the failed job never landed')
  t.same(leftovers(content), [])
  t.same(readdirSync(path.join(gitDir, 'objects', 'pack')).filter(f => f.startsWith('tmp_')), [], 'the dropped pack left no temporary file')
  t.equal(gitIn(dir, ['fsck', '--no-progress', '--strict', '--no-dangling']), '')
})
