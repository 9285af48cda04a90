import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { makeRepoWithStore, gitIn } from '../helpers/git-repo.js'
import { RefTreeStore, shardOf, treeNameOf, idOfTreeName, type TreeUpdate } from '../../lib/storage/ref-tree-store.js'
import { GitStore } from '../../lib/storage/git-store.js'

const REF = 'refs/cms/test'
const decode = (text: string): { n: number } => JSON.parse(text) as { n: number }
const store = (git: GitStore): RefTreeStore<{ n: number }> => new RefTreeStore({ git, ref: REF, decode, message: 'test' })
const set = (collection: string, id: string, n: number) => ({ type: 'update' as const, collection, id, update: () => ({ n }) })

t.test('concurrent updates are grouped into few commits and all land', async t => {
  const { dir, git } = makeRepoWithStore(t)
  const s = store(git)
  await Promise.all(Array.from({ length: 30 }, async (_, i) => await s.update([set('c', `e${i}`, i)])))
  t.equal((await s.keys()).length, 30)
  t.same((await s.list()).map(d => d.doc.n).sort((a, b) => a - b), Array.from({ length: 30 }, (_, i) => i))
  const commits = Number(gitIn(dir, ['rev-list', '--count', REF]))
  t.ok(commits < 30, `${commits} commits for 30 updates`)
  t.equal(gitIn(dir, ['cat-file', '-p', `${REF}:c/${shardOf('e1')}/e1.json`]), '{"n":1}')
})

t.test('a failing update function fails only its caller', async t => {
  const { git } = makeRepoWithStore(t)
  const s = store(git)
  const results = await Promise.allSettled([
    s.update([set('c', 'a', 1)]),
    s.update([{ type: 'update', collection: 'c', id: 'bad', update: () => { throw new Error('refused') } }]),
    s.update([set('c', 'b', 2)])
  ])
  t.same(results.map(r => r.status), ['fulfilled', 'rejected', 'fulfilled'])
  t.match((results[1] as PromiseRejectedResult).reason, { message: 'refused' })
  t.same((await s.list()).map(d => d.id), ['a', 'b'])
})

t.test('updates in one batch apply in order, across a collection removal', async t => {
  const { dir, git } = makeRepoWithStore(t)
  const s = store(git)
  await s.update([set('c', 'old', 1), set('d', 'keep', 1)])
  await s.update([
    { type: 'update', collection: 'c', id: 'x', update: (cur) => ({ n: (cur?.n ?? 0) + 1 }) },
    { type: 'update', collection: 'c', id: 'x', update: (cur) => ({ n: (cur?.n ?? 0) + 10 }) },
    { type: 'removeCollection', collection: 'c' },
    { type: 'update', collection: 'c', id: 'y', update: (cur) => ({ n: cur === null ? 5 : -1 }) }
  ])
  t.same((await s.list()).map(d => `${d.collection}/${d.id}=${d.doc.n}`), ['c/y=5', 'd/keep=1'])
  t.equal(Number(gitIn(dir, ['rev-list', '--count', REF])), 2, 'one commit per batch')
  const head = await git.readRef(REF)
  await s.update([{ type: 'update', collection: 'd', id: 'keep', update: () => ({ n: 1 }) }])
  t.equal(await git.readRef(REF), head, 'an update that changes nothing writes nothing')
  t.equal(gitIn(dir, ['fsck', '--no-progress', '--strict', '--no-dangling']), '')
})

t.test('a commit made by someone else in between is built upon, not overwritten', async t => {
  const { dir, gitDir, git } = makeRepoWithStore(t)
  const s = store(git)
  await s.update([set('c', 'a', 1)])
  // An outside writer (plain git) adds a file to the tree.
  gitIn(dir, ['read-tree', `--index-output=${gitDir}/tmp-index`, REF])
  const blob = gitIn(dir, ['hash-object', '-w', '--stdin'], '{"n":9}\n')
  const env = { GIT_INDEX_FILE: `${gitDir}/tmp-index` }
  const run = (args: string[]): string => execGit(dir, args, env)
  run(['update-index', '--add', '--cacheinfo', `100644,${blob},c/${shardOf('z')}/z.json`])
  const tree = run(['write-tree'])
  const commit = gitIn(dir, ['commit-tree', tree, '-p', REF, '-m', 'outside'])
  gitIn(dir, ['update-ref', REF, commit])
  await s.update([set('c', 'b', 2)])
  t.same((await s.list()).map(d => `${d.id}=${d.doc.n}`), ['a=1', 'b=2', 'z=9'])
  t.equal(gitIn(dir, ['rev-parse', `${REF}^`]), commit)
})

t.test('a commit built on one in flight is built again when an outside writer moves the ref meanwhile: every update lands, the outside change stays', async t => {
  const { dir, gitDir, git } = makeRepoWithStore(t)
  const s = store(git)
  await s.update([set('c', 'a', 1)])
  let outside = ''
  const first = s.update([set('c', 'b', 2)])
  // Queued while the first commit is written, so built on it; its update moves the ref as plain git
  // would, before or after the first commit lands (either way both must land on top of it).
  const second = s.update([{ type: 'update', collection: 'c', id: 'c', update: () => { if (outside === '') outside = outsideCommit(dir, gitDir, 'z'); return { n: 3 } } }])
  await Promise.all([first, second])
  t.same((await s.list()).map(d => `${d.id}=${d.doc.n}`), ['a=1', 'b=2', 'c=3', 'z=9'])
  t.equal(gitIn(dir, ['merge-base', '--is-ancestor', outside, REF]), '', 'the outside commit is in the history')
  t.equal(gitIn(dir, ['fsck', '--no-progress', '--strict', '--no-dangling']), '')
})

/** Adds `<id>.json` = {"n":9} on top of the ref with plain git, by compare-and-swap (the store may hold the ref's lock a moment). */
function outsideCommit (dir: string, gitDir: string, id: string): string {
  for (;;) {
    const head = gitIn(dir, ['rev-parse', REF])
    const env = { GIT_INDEX_FILE: `${gitDir}/outside-index` }
    execGit(dir, ['read-tree', head], env)
    const blob = gitIn(dir, ['hash-object', '-w', '--stdin'], '{"n":9}\n')
    execGit(dir, ['update-index', '--add', '--cacheinfo', `100644,${blob},c/${shardOf(id)}/${id}.json`], env)
    const commit = gitIn(dir, ['commit-tree', execGit(dir, ['write-tree'], env), '-p', head, '-m', 'outside'])
    try {
      gitIn(dir, ['update-ref', REF, commit, head])
      return commit
    } catch {}
  }
}

t.test('updates applied with cold caches (another store) and with warm ones read each document as it is', async t => {
  const { gitDir, git } = makeRepoWithStore(t)
  const warm = store(git)
  const add = (id: string, by: number): TreeUpdate<{ n: number }> => ({ type: 'update', collection: 'c', id, update: (current) => ({ n: (current?.n ?? 0) + by }) })
  await warm.update(Array.from({ length: 300 }, (_, i) => add(`e${i}`, i)))
  // A second store knows nothing: its trees and documents are read (the prefetch's reads).
  const cold = store(coldStore(t, gitDir))
  await cold.update(Array.from({ length: 100 }, (_, i) => add(`e${i}`, 1000)))
  // The first one has them cached but the ref moved: what it cached at the old root is not used.
  await warm.update(Array.from({ length: 100 }, (_, i) => add(`e${i + 50}`, 100_000)))
  const docs = new Map((await store(coldStore(t, gitDir)).list()).map(d => [d.id, d.doc.n]))
  t.equal(docs.size, 300)
  const expected = (i: number): number => i + (i < 100 ? 1000 : 0) + (i >= 50 && i < 150 ? 100_000 : 0)
  t.equal(Array.from({ length: 300 }, (_, i) => i).filter(i => docs.get(`e${i}`) !== expected(i)).length, 0, 'every update applied to the document as it was')
})

function execGit (cwd: string, args: string[], env: Record<string, string>): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...env } }).trim()
}

t.test('ids with /, spaces, dots and non-ASCII get %-encoded tree names; plain ids keep theirs', async t => {
  const { dir, git } = makeRepoWithStore(t)
  const s = store(git)
  const ids = ['plain-id_1', '2023/launch', 'what\'s new', 'v1.2-notes', 'Café', 'a%b']
  await s.update(ids.map((id, i) => set('c', id, i)))
  t.equal(treeNameOf('plain-id_1'), 'plain-id_1.json', 'an id of the old grammar is stored as before')
  t.equal(treeNameOf('2023/launch'), '2023%2Flaunch.json')
  t.equal(treeNameOf('Café'), 'Caf%C3%A9.json')
  t.equal(gitIn(dir, ['cat-file', '-p', `${REF}:c/${shardOf('2023/launch')}/2023%2Flaunch.json`]), '{"n":1}')
  for (const [i, id] of ids.entries()) t.same(await s.read('c', id), { n: i }, id)
  t.same((await s.list()).map(d => d.id).sort(), [...ids].sort())
  t.same((await s.list({ collection: 'c', id: 'what\'s new' })).map(d => d.doc.n), [2])
  t.equal(gitIn(dir, ['fsck', '--no-progress', '--strict', '--no-dangling']), '', 'git accepts every tree name')
  // Names that are not ours (another spelling, a bad id) are skipped.
  for (const name of ['a%2fb.json', '%2E%2E.json', '..json', 'x.txt', '%ZZ.json']) t.equal(idOfTreeName(name), null, name)
  t.equal(idOfTreeName('2023%2Flaunch.json'), '2023/launch')
})

t.test('every tree written is the tree git makes of its listing', async t => {
  const { dir, git } = makeRepoWithStore(t)
  const s = store(git)
  await s.update(Array.from({ length: 600 }, (_, i) => set('c', `e${i}`, i)))
  await s.update([set('c', 'e1', 1000), { type: 'update', collection: 'c', id: 'e2', update: () => null }, set('d', 'x', 1)])
  for (const commit of gitIn(dir, ['rev-list', REF]).split('\n')) {
    for (const tree of [`${commit}^{tree}`, `${commit}:c`, `${commit}:c/${shardOf('e1')}`, `${commit}:c/${shardOf('e2')}`]) {
      t.equal(gitIn(dir, ['mktree'], `${gitIn(dir, ['ls-tree', tree])}\n`), gitIn(dir, ['rev-parse', tree]), tree)
    }
  }
  t.equal(gitIn(dir, ['fsck', '--full', '--no-progress', '--strict', '--no-dangling']), '')
})

/** Another instance's store on the same repository (cold). */
function coldStore (t: Test, gitDir: string): GitStore {
  const git = new GitStore(gitDir)
  t.teardown(async () => { await git.close() })
  return git
}
