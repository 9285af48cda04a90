import t, { type Test } from 'tap'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { makeRepoWithStore, gitIn } from '../helpers/git-repo.js'
import { GitStore } from '../../lib/storage/git-store.js'
import { HistoryStore, HISTORY_REF, MAX_SNAPSHOTS, type Snapshot } from '../../lib/storage/history-store.js'
import { shardOf } from '../../lib/storage/ref-tree-store.js'
import { BadRequestError, StorageUnavailableError } from '../../lib/errors.js'
import { writeFile, rm } from 'node:fs/promises'

const editor = { id: 'alice', name: 'Alice' }
const snap = (n: number, action: Snapshot['action'] = 'save'): Omit<Snapshot, 'ts'> => ({ data: { n }, action, editor, revision: n })

t.test('an entry without history reads as empty and nothing is written', async t => {
  const { git } = makeRepoWithStore(t)
  const history = new HistoryStore({ git })
  t.same(await history.list('posts', 'hello'), [])
  await history.removeCollection('posts')
  t.same(await history.append([]), [])
  t.equal(await git.readRef(HISTORY_REF), null, 'no ref created for nothing')
})

t.test('append and list; the document sits at its sharded path', async t => {
  const { dir, git } = makeRepoWithStore(t)
  const history = new HistoryStore({ git })
  const [first] = await history.append([{ collection: 'posts', id: 'hello', snapshot: { ...snap(1), bodySource: '# Hi' } }])
  t.ok(first !== undefined && first.ts > 0)
  const [second] = await history.append([{ collection: 'posts', id: 'hello', snapshot: snap(2, 'delete') }])
  const list = await history.list('posts', 'hello')
  t.same(list, [first, second])
  t.match(list[0], { data: { n: 1 }, action: 'save', editor, revision: 1, bodySource: '# Hi' })
  t.same(await history.list('posts', 'other'), [])

  // Another instance (cold caches) reads the same, and so does git.
  t.same(await new HistoryStore({ git: other(t, git) }).list('posts', 'hello'), list)
  const doc = JSON.parse(gitIn(dir, ['show', `${HISTORY_REF}:posts/${shardOf('hello')}/hello.json`])) as { snapshots: Snapshot[] }
  t.same(doc.snapshots, list)
})

t.test('the 51st snapshot drops the oldest', async t => {
  const { git } = makeRepoWithStore(t)
  const history = new HistoryStore({ git })
  for (let n = 1; n <= MAX_SNAPSHOTS; n++) await history.append([{ collection: 'posts', id: 'a', snapshot: snap(n) }])
  let list = await history.list('posts', 'a')
  t.equal(list.length, 50)
  t.equal(list[0]!.data.n, 1)
  await history.append([{ collection: 'posts', id: 'a', snapshot: snap(51) }])
  list = await history.list('posts', 'a')
  t.equal(list.length, 50)
  t.same(list.map(s => s.data.n), Array.from({ length: 50 }, (_, i) => i + 2), 'oldest gone, newest last')
})

t.test('ts is strictly increasing per entry, even within one millisecond', async t => {
  const { git } = makeRepoWithStore(t)
  const history = new HistoryStore({ git })
  const stored = await history.append([1, 2, 3, 4, 5].map(n => ({ collection: 'posts', id: 'a', snapshot: snap(n) })))
  const more = await Promise.all([6, 7, 8].map(async n => await history.append([{ collection: 'posts', id: 'a', snapshot: snap(n) }])))
  const list = await history.list('posts', 'a')
  t.same(list.map(s => s.data.n).sort((x, y) => Number(x) - Number(y)), [1, 2, 3, 4, 5, 6, 7, 8])
  for (let i = 1; i < list.length; i++) t.ok(list[i]!.ts > list[i - 1]!.ts, `ts ${i} increases`)
  t.same(stored.map(s => s.ts), list.slice(0, 5).map(s => s.ts), 'append returns the stored snapshots')
  t.same(more.flat().map(s => s.ts).sort(), list.slice(5).map(s => s.ts).sort())
  t.equal(new Set(list.map(s => s.ts)).size, 8)
})

t.test('a stray ts from the caller is ignored', async t => {
  const { git } = makeRepoWithStore(t)
  const history = new HistoryStore({ git })
  const [s] = await history.append([{ collection: 'posts', id: 'a', snapshot: { ...snap(1), ts: 5 } as unknown as Omit<Snapshot, 'ts'> }])
  t.ok(s!.ts > 1_000_000_000_000)
})

t.test('removeCollection drops one collection and keeps the others', async t => {
  const { git } = makeRepoWithStore(t)
  const history = new HistoryStore({ git })
  await history.append([
    { collection: 'posts', id: 'a', snapshot: snap(1) },
    { collection: 'posts', id: 'b', snapshot: snap(2) },
    { collection: 'pages', id: 'a', snapshot: snap(3) }
  ])
  const before = await git.readRef(HISTORY_REF)
  await history.removeCollection('posts')
  t.same(await history.list('posts', 'a'), [])
  t.same(await history.list('posts', 'b'), [])
  t.equal((await history.list('pages', 'a')).length, 1)
  t.not(await git.readRef(HISTORY_REF), before)
  await history.removeCollection('pages')
  const emptied = await git.readRef(HISTORY_REF)
  t.ok(emptied !== null, 'the ref is kept when empty')
  await history.removeCollection('pages')
  t.equal(await git.readRef(HISTORY_REF), emptied, 'removing nothing writes no commit')
  await history.append([{ collection: 'posts', id: 'a', snapshot: snap(4) }])
  t.same((await history.list('posts', 'a')).map(s => s.data.n), [4], 'a re-created collection starts fresh')
})

t.test('bad names are refused before any git access', async t => {
  const { git } = makeRepoWithStore(t)
  const history = new HistoryStore({ git })
  await t.rejects(history.append([{ collection: '../x', id: 'a', snapshot: snap(1) }]), BadRequestError)
  await t.rejects(history.append([{ collection: 'posts', id: 'a/../b', snapshot: snap(1) }]), BadRequestError)
  await t.rejects(history.list('posts', '-rf'), BadRequestError)
  await t.rejects(history.removeCollection('Posts'), BadRequestError)
  t.equal(await git.readRef(HISTORY_REF), null)
})

t.test('20 concurrent appends from two instances: none lost; git is happy; working tree untouched', async t => {
  const { dir, gitDir, git } = makeRepoWithStore(t)
  const head = gitIn(dir, ['rev-parse', 'HEAD'])
  const one = new HistoryStore({ git })
  // A second instance plays the outside writer: its commits make the first one's CAS fail.
  const two = new HistoryStore({ git: other(t, git) })
  await Promise.all(Array.from({ length: 20 }, async (_, i) => {
    const store = i % 2 === 0 ? one : two
    await store.append([{ collection: 'posts', id: `e${i % 5}`, snapshot: snap(i) }])
  }))
  const seen: number[] = []
  for (let e = 0; e < 5; e++) {
    const list = await one.list('posts', `e${e}`)
    for (let i = 1; i < list.length; i++) t.ok(list[i]!.ts > list[i - 1]!.ts)
    seen.push(...list.map(s => Number(s.data.n)))
  }
  t.same(seen.sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i), 'every append landed')
  t.equal(gitIn(dir, ['fsck', '--full', '--no-progress', '--strict', '--no-dangling']), '')
  const log = gitIn(dir, ['log', '--format=%an <%ae> %s', HISTORY_REF]).split('\n')
  t.ok(log.length >= 1 && log.length <= 20, `grouped into ${log.length} commits`)
  t.ok(log.every(l => l === 'git-cms <git-cms@users.git-cms.invalid> cms: history'))
  t.equal(gitIn(dir, ['status', '--porcelain']), '')
  t.equal(gitIn(dir, ['rev-parse', 'HEAD']), head)
  t.notOk(existsSync(path.join(gitDir, `${HISTORY_REF}.lock`)))
})

t.test('works after git gc packed the ref and the objects', async t => {
  const { dir, gitDir, git } = makeRepoWithStore(t)
  const history = new HistoryStore({ git })
  await history.append([{ collection: 'posts', id: 'a', snapshot: snap(1) }])
  gitIn(dir, ['gc', '-q', '--prune=now'])
  t.notOk(existsSync(path.join(gitDir, HISTORY_REF)), 'the ref is packed')
  const cold = new HistoryStore({ git: other(t, git) })
  t.same((await cold.list('posts', 'a')).map(s => s.data.n), [1])
  await cold.append([{ collection: 'posts', id: 'a', snapshot: snap(2) }])
  t.same((await history.list('posts', 'a')).map(s => s.data.n), [1, 2])
  t.equal(gitIn(dir, ['fsck', '--no-progress', '--strict', '--no-dangling']), '')
})

t.test('a history document that is not ours reads as empty and is replaced by the next append', async t => {
  const { dir, git } = makeRepoWithStore(t)
  const history = new HistoryStore({ git })
  await history.append([{ collection: 'posts', id: 'a', snapshot: snap(1) }])
  const blob = gitIn(dir, ['hash-object', '-w', '--stdin'], '{not json')
  const shard = gitIn(dir, ['mktree'], `100644 blob ${blob}\ta.json\n`)
  const coll = gitIn(dir, ['mktree'], `040000 tree ${shard}\t${shardOf('a')}\n`)
  const root = gitIn(dir, ['mktree'], `040000 tree ${coll}\tposts\n`)
  const parent = gitIn(dir, ['rev-parse', HISTORY_REF])
  const commit = gitIn(dir, ['commit-tree', root, '-p', parent, '-m', 'outside'])
  gitIn(dir, ['update-ref', HISTORY_REF, commit, parent])
  t.same(await history.list('posts', 'a'), [])
  await history.append([{ collection: 'posts', id: 'a', snapshot: snap(2) }])
  t.same((await history.list('posts', 'a')).map(s => s.data.n), [2])
  t.equal(gitIn(dir, ['rev-parse', `${HISTORY_REF}^`]), commit, 'built on the outside commit')
})

t.test('a ref locked by another process for too long gives a 503 and changes nothing', async t => {
  const { gitDir, git } = makeRepoWithStore(t)
  const history = new HistoryStore({ git })
  await history.append([{ collection: 'posts', id: 'a', snapshot: snap(1) }])
  const before = await git.readRef(HISTORY_REF)
  await writeFile(path.join(gitDir, `${HISTORY_REF}.lock`), '')
  await t.rejects(history.append([{ collection: 'posts', id: 'a', snapshot: snap(2) }]), StorageUnavailableError)
  t.equal(await git.readRef(HISTORY_REF), before)
  await rm(path.join(gitDir, `${HISTORY_REF}.lock`))
  await history.append([{ collection: 'posts', id: 'a', snapshot: snap(3) }])
  t.same((await history.list('posts', 'a')).map(s => s.data.n), [1, 3], 'works again once the lock is gone')
})

/** A second git store on the same repository (another instance's, with cold processes). */
function other (t: Test, git: GitStore): GitStore {
  const store = new GitStore(git.gitDir)
  t.teardown(async () => { await store.close() })
  return store
}
