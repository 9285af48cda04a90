import t from 'tap'
import { makeRepoWithStore, gitIn } from '../helpers/git-repo.js'
import { GitStore } from '../../lib/storage/git-store.js'
import { DraftStore, draftRef, type DraftRecord } from '../../lib/storage/draft-store.js'
import { shardOf } from '../../lib/storage/ref-tree-store.js'
import { BadRequestError } from '../../lib/errors.js'

const record = (collection: string, id: string, n = 1, extra: Partial<DraftRecord> = {}): DraftRecord => ({
  version: 1, collection, id, kind: 'put', data: { n }, baseRevision: 1, revision: 1 + n, updatedAt: 1_700_000_000_000 + n, ...extra
})

/** Puts a blob with arbitrary text at `<collection>/<shard>/<id>.json` of a ref, with git plumbing. */
function plantDoc (dir: string, ref: string, collection: string, id: string, text: string): void {
  const blob = gitIn(dir, ['hash-object', '-w', '--stdin'], text)
  const shard = gitIn(dir, ['mktree'], `100644 blob ${blob}\t${id}.json\n`)
  const coll = gitIn(dir, ['mktree'], `040000 tree ${shard}\t${shardOf(id)}\n`)
  const root = gitIn(dir, ['mktree'], `040000 tree ${coll}\t${collection}\n`)
  const commit = gitIn(dir, ['commit-tree', root, '-m', 'old version'])
  gitIn(dir, ['update-ref', ref, commit])
}

t.test('put, get, list, count and remove', async t => {
  const { dir, git } = makeRepoWithStore(t)
  const drafts = new DraftStore({ git })
  t.equal(await drafts.get('alice', 'posts', 'a'), null)
  t.same(await drafts.list('alice'), [])
  t.equal((await drafts.keys('alice')).length, 0)

  const md = record('posts', 'b', 2, { markdown: { body: 'x', range: [0, 1] }, fieldsEdited: true })
  await drafts.put('alice', [record('posts', 'a'), md, record('pages', 'z', 3, { kind: 'delete', data: undefined })])
  t.same(await drafts.get('alice', 'posts', 'b'), md)
  t.equal((await drafts.keys('alice')).length, 3)
  t.same((await drafts.list('alice')).map(d => `${d.collection}/${d.id}`), ['pages/z', 'posts/a', 'posts/b'], 'sorted by collection then id')
  t.same(await drafts.keys('alice'), [{ collection: 'pages', id: 'z' }, { collection: 'posts', id: 'a' }, { collection: 'posts', id: 'b' }], 'keys without the documents')
  t.same(await drafts.keys('bob'), [], 'another editor has none')
  t.same((await drafts.list('alice', { collection: 'posts' })).map(d => d.id), ['a', 'b'])
  t.same(await drafts.list('alice', { collection: 'posts', id: 'b' }), [md])
  t.same(await drafts.list('alice', { collection: 'posts', id: 'nope' }), [])
  const cold = new GitStore(git.gitDir)
  t.teardown(async () => { await cold.close() })
  t.same(await new DraftStore({ git: cold }).list('alice'), await drafts.list('alice'), 'a cold instance reads the same')

  await drafts.put('alice', [record('posts', 'a', 7)])
  t.same((await drafts.get('alice', 'posts', 'a'))?.data, { n: 7 }, 'a put replaces the earlier draft')
  t.equal((await drafts.keys('alice')).length, 3)

  t.same(await drafts.remove('alice', [{ collection: 'posts', id: 'a' }, { collection: 'posts', id: 'missing' }, { collection: 'posts', id: 'a' }]), ['posts/a'])
  t.equal(await drafts.get('alice', 'posts', 'a'), null)
  t.equal((await drafts.keys('alice')).length, 2)
  const before = await git.readRef(draftRef('alice'))
  t.same(await drafts.remove('alice', [{ collection: 'posts', id: 'missing' }]), [])
  t.equal(await git.readRef(draftRef('alice')), before, 'removing nothing writes no commit')

  t.same(await drafts.remove('alice', [{ collection: 'posts', id: 'b' }, { collection: 'pages', id: 'z' }]), ['posts/b', 'pages/z'])
  t.equal((await drafts.keys('alice')).length, 0)
  t.equal(await git.readRef(draftRef('alice')), null, 'the ref is deleted once it holds no draft')
  t.equal(gitIn(dir, ['for-each-ref', 'refs/cms/drafts/']), '', 'no draft ref is left')
  t.same(await drafts.remove('alice', [{ collection: 'posts', id: 'b' }]), [], 'removing from no ref is a no-op')
  await drafts.put('alice', [record('posts', 'again')])
  t.same((await drafts.list('alice')).map(d => d.id), ['again'], 'a later put makes the ref again')
  t.equal(gitIn(dir, ['fsck', '--no-progress', '--strict', '--no-dangling']), '')
  t.equal(gitIn(dir, ['status', '--porcelain']), '')
})

t.test("each editor has their own ref, and nobody sees another's drafts", async t => {
  const { dir, git } = makeRepoWithStore(t)
  const drafts = new DraftStore({ git })
  const ids = ['alice', 'bob@example.com', 'auth0|123', 'a/b', '..', 'Ünïcode name', 'x'.repeat(300)]
  for (const [i, id] of ids.entries()) await drafts.put(id, [record('posts', `e${i}`)])
  const refs = ids.map(draftRef)
  t.equal(new Set(refs).size, ids.length, 'distinct refs')
  for (const ref of refs) gitIn(dir, ['check-ref-format', ref])
  for (const [i, id] of ids.entries()) {
    t.same((await drafts.list(id)).map(d => d.id), [`e${i}`], id)
  }
  t.equal(draftRef('alice'), 'refs/cms/drafts/alice')
  t.equal(draftRef('%41'), 'refs/cms/drafts/%2541', 'the escape character is escaped too')
  t.throws(() => draftRef(''))
})

t.test('a record this version cannot read comes back as a legacy draft', async t => {
  const { dir, git } = makeRepoWithStore(t)
  plantDoc(dir, draftRef('alice'), 'posts', 'old', '{"this is": not json')
  plantDoc(dir, draftRef('bob'), 'posts', 'old', JSON.stringify({ ...record('posts', 'old'), version: 2 }))
  const drafts = new DraftStore({ git })
  for (const editor of ['alice', 'bob']) {
    t.same(await drafts.list(editor), [{ legacy: true, collection: 'posts', id: 'old' }], editor)
    t.equal(await drafts.get(editor, 'posts', 'old'), null)
    t.equal((await drafts.keys(editor)).length, 1)
  }
  await drafts.put('alice', [record('posts', 'new')])
  t.same(await drafts.list('alice'), [record('posts', 'new'), { legacy: true, collection: 'posts', id: 'old' }], 'the legacy record is kept by other writes')
  t.same(await drafts.remove('alice', [{ collection: 'posts', id: 'old' }]), ['posts/old'], 'and can be discarded')
  t.same(await drafts.list('alice'), [record('posts', 'new')])
})

t.test('foreign files in the tree are ignored', async t => {
  const { dir, git } = makeRepoWithStore(t)
  plantDoc(dir, draftRef('alice'), 'posts', 'not-in-its-shard', JSON.stringify(record('posts', 'x')))
  // Same blob but under the wrong shard: move it by re-planting with another id's shard.
  const drafts = new DraftStore({ git })
  t.same((await drafts.list('alice')).map(d => d.id), ['not-in-its-shard'])
  const blob = gitIn(dir, ['hash-object', '-w', '--stdin'], JSON.stringify(record('posts', 'x')))
  const wrongShard = shardOf('x') === '00' ? '01' : '00'
  const shard = gitIn(dir, ['mktree'], `100644 blob ${blob}\tx.json\n100644 blob ${blob}\tREADME\n`)
  const coll = gitIn(dir, ['mktree'], `040000 tree ${shard}\t${wrongShard}\n`)
  const root = gitIn(dir, ['mktree'], `040000 tree ${coll}\tposts\n100644 blob ${blob}\tnotes.txt\n`)
  gitIn(dir, ['update-ref', draftRef('alice'), gitIn(dir, ['commit-tree', root, '-m', 'odd'])])
  t.same(await drafts.list('alice'), [])
  t.equal((await drafts.keys('alice')).length, 0)
})

t.test('bad names are refused before any git access', async t => {
  const { git } = makeRepoWithStore(t)
  const drafts = new DraftStore({ git })
  await t.rejects(drafts.put('alice', [record('posts', '../x')]), BadRequestError)
  await t.rejects(drafts.put('alice', [record('Posts', 'x')]), BadRequestError)
  await t.rejects(drafts.list('alice', { collection: 'a/b' }), BadRequestError)
  await t.rejects(drafts.remove('alice', [{ collection: 'posts', id: '-x' }]), BadRequestError)
  t.equal(await git.readRef(draftRef('alice')), null)
})

t.test('with keepEmptyRefs (refs synced to a remote), an emptied ref stays, with an empty tree', async t => {
  const { dir, git } = makeRepoWithStore(t)
  const drafts = new DraftStore({ git, keepEmptyRefs: true })
  await drafts.put('alice', [record('posts', 'a')])
  await drafts.remove('alice', [{ collection: 'posts', id: 'a' }])
  t.ok(await git.readRef(draftRef('alice')) !== null, 'the ref stays')
  t.equal(gitIn(dir, ['ls-tree', '-r', draftRef('alice')]), '')
})

t.test('deleting an emptied ref is a compare-and-swap: a save racing it survives', async t => {
  const { dir, git } = makeRepoWithStore(t)
  // The primitive: a delete expecting an old value leaves a moved ref alone.
  await new DraftStore({ git }).put('carol', [record('posts', 'x')])
  const old = await git.readRef(draftRef('carol'))
  await new DraftStore({ git }).put('carol', [record('posts', 'y')])
  const now = await git.readRef(draftRef('carol'))
  t.equal(await git.refs.update(draftRef('carol'), null, old!), 'moved')
  t.equal(await git.readRef(draftRef('carol')), now, 'the moved ref keeps its value')
  // Another process's save landing while this one empties the ref: never lost, whichever lands first.
  const outsideGit = new GitStore(git.gitDir)
  t.teardown(async () => { await outsideGit.close() })
  const drafts = new DraftStore({ git })
  const outside = new DraftStore({ git: outsideGit })
  for (let round = 0; round < 15; round++) {
    await drafts.put('alice', [record('posts', 'gone')])
    await Promise.all([
      drafts.remove('alice', [{ collection: 'posts', id: 'gone' }]),
      outside.put('alice', [record('posts', `kept${round}`, round)])
    ])
    t.same((await drafts.list('alice')).map(d => d.id), [`kept${round}`], `round ${round}: the racing save is there`)
    await outside.remove('alice', [{ collection: 'posts', id: `kept${round}` }])
    t.equal(await git.readRef(draftRef('alice')), null, `round ${round}: emptied, the ref is gone`)
  }
  t.equal(gitIn(dir, ['fsck', '--no-progress', '--strict', '--no-dangling']), '')
})

t.test('20 concurrent puts and removes of one editor: none lost', async t => {
  const { dir, git } = makeRepoWithStore(t)
  const drafts = new DraftStore({ git })
  const outsideGit = new GitStore(git.gitDir)
  t.teardown(async () => { await outsideGit.close() })
  const outside = new DraftStore({ git: outsideGit })
  await drafts.put('alice', [record('posts', 'gone')])
  await Promise.all([
    ...Array.from({ length: 20 }, async (_, i) => await (i % 3 === 0 ? outside : drafts).put('alice', [record('posts', `e${i}`, i)])),
    drafts.remove('alice', [{ collection: 'posts', id: 'gone' }])
  ])
  const list = await drafts.list('alice')
  t.same(list.map(d => d.id).sort(), Array.from({ length: 20 }, (_, i) => `e${i}`).sort())
  t.equal((await drafts.keys('alice')).length, 20)
  t.equal(gitIn(dir, ['fsck', '--no-progress', '--strict', '--no-dangling']), '')
  t.ok(Number(gitIn(dir, ['rev-list', '--count', draftRef('alice')])) < 22, 'group commit merged some writes')
})

t.test('a thousand drafts list and go in one commit, quickly', async t => {
  const { dir, git } = makeRepoWithStore(t)
  await new DraftStore({ git }).put('alice', Array.from({ length: 1000 }, (_, i) => record('posts', `e${i}`, i)))
  const drafts = new DraftStore({ git })
  const started = Date.now()
  const list = await drafts.list('alice')
  t.equal(list.length, 1000)
  const removed = await drafts.remove('alice', list.map(d => ({ collection: d.collection, id: d.id })))
  t.equal(removed.length, 1000)
  const elapsed = Date.now() - started
  // The target is 3 s for a whole publish; the bound leaves room for a busy CI machine.
  t.comment(`cold list + remove of 1000 took ${elapsed} ms (a figure, not a check: timing belongs to the bench)`)
  t.equal(await git.readRef(draftRef('alice')), null, 'one delete of the emptied ref, no second commit')
  t.equal(gitIn(dir, ['for-each-ref', 'refs/cms/drafts/']), '')
})
