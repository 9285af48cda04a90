import t from 'tap'
import { execFileSync } from 'node:child_process'
import { makeRepo, gitIn } from '../helpers/git-repo.js'
import { RefTreeStore, shardOf, type DocCodec } from '../../lib/storage/ref-tree-store.js'
import { readRef } from '../../lib/storage/git-refs.js'

const REF = 'refs/cms/test'
const codec: DocCodec<{ n: number }> = {
  decode: (text) => JSON.parse(text) as { n: number },
  encode: (doc) => `${JSON.stringify(doc)}\n`
}
const store = (gitDir: string): RefTreeStore<{ n: number }> => new RefTreeStore({ gitDir, ref: REF, codec, message: 'test' })
const set = (collection: string, id: string, n: number) => ({ type: 'update' as const, collection, id, update: () => ({ n }) })

t.test('concurrent updates are grouped into few commits and all land', async t => {
  const { dir, gitDir } = makeRepo(t)
  const s = store(gitDir)
  await Promise.all(Array.from({ length: 30 }, async (_, i) => await s.update([set('c', `e${i}`, i)])))
  t.equal(await s.count(), 30)
  t.same((await s.list()).map(d => d.doc.n).sort((a, b) => a - b), Array.from({ length: 30 }, (_, i) => i))
  const commits = Number(gitIn(dir, ['rev-list', '--count', REF]))
  t.ok(commits < 30, `${commits} commits for 30 updates`)
  t.equal(gitIn(dir, ['cat-file', '-p', `${REF}:c/${shardOf('e1')}/e1.json`]), '{"n":1}')
})

t.test('a failing update function fails only its caller', async t => {
  const { gitDir } = makeRepo(t)
  const s = store(gitDir)
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
  const { dir, gitDir } = makeRepo(t)
  const s = store(gitDir)
  await s.update([set('c', 'old', 1), set('d', 'keep', 1)])
  await s.update([
    { type: 'update', collection: 'c', id: 'x', update: (cur) => ({ n: (cur?.n ?? 0) + 1 }) },
    { type: 'update', collection: 'c', id: 'x', update: (cur) => ({ n: (cur?.n ?? 0) + 10 }) },
    { type: 'removeCollection', collection: 'c' },
    { type: 'update', collection: 'c', id: 'y', update: (cur) => ({ n: cur === null ? 5 : -1 }) }
  ])
  t.same((await s.list()).map(d => `${d.collection}/${d.id}=${d.doc.n}`), ['c/y=5', 'd/keep=1'])
  t.equal(Number(gitIn(dir, ['rev-list', '--count', REF])), 2, 'one commit per batch')
  const head = await readRef(gitDir, REF)
  await s.update([{ type: 'update', collection: 'd', id: 'keep', update: () => ({ n: 1 }) }])
  t.equal(await readRef(gitDir, REF), head, 'an update that changes nothing writes nothing')
  t.equal(gitIn(dir, ['fsck', '--no-progress', '--strict', '--no-dangling']), '')
})

t.test('a commit made by someone else in between is built upon, not overwritten', async t => {
  const { dir, gitDir } = makeRepo(t)
  const s = store(gitDir)
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

function execGit (cwd: string, args: string[], env: Record<string, string>): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...env } }).trim()
}
