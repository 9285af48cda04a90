import t from 'tap'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { startServer, git, writeHeaders, type TestServer } from '../helpers/site.js'
import { HistoryStore } from '../../lib/storage/history-store.js'
import { GitStore } from '../../lib/storage/git-store.js'
import { shardOf } from '../../lib/storage/ref-tree-store.js'

// Saves that arrive together share one history commit (and their folder's fsync): each must still
// end exactly as if the saves had run one after the other. The same saves run at once on `notes`
// and one by one on `serial` (same entries), and the two collections are compared.
const API = '/api/cms'
const ENTRIES = 8

interface Stored { data: unknown, action: string, revision?: number, editor: unknown }

const files: Record<string, string> = { 'cms.config.yaml': 'collections:\n  notes:\n    format: json\n  serial:\n    format: json\n' }
for (const c of ['notes', 'serial']) for (let i = 0; i < ENTRIES; i++) files[`content/${c}/e${i}.json`] = `{"n":0,"k":${i}}\n`

let s: TestServer
let cookie: string
t.before(async () => {
  s = await startServer(t, { files })
  cookie = await s.login()
})

async function save (collection: string, id: string, n: number, expectedRevision?: number): Promise<{ status: number, body: { revision?: number, code?: string } }> {
  const res = await s.request(`${API}/mutate`, {
    method: 'POST',
    headers: writeHeaders(cookie),
    body: JSON.stringify({ type: 'save_field', collection, id, field: 'n', value: n, ...(expectedRevision !== undefined ? { expectedRevision } : {}) })
  })
  return { status: res.status, body: await res.json() as { revision?: number, code?: string } }
}

/** An entry's snapshots on refs/cms/history, without their ts (the only field that depends on timing). */
function snapshots (collection: string, id: string): Stored[] {
  let text: string
  try { text = git(s.repoDir, 'show', `refs/cms/history:${collection}/${shardOf(id)}/${id}.json`) } catch { return [] }
  return (JSON.parse(text) as { snapshots: Array<Stored & { ts: number }> }).snapshots.map(({ ts: _ts, ...rest }) => rest)
}

const fileOf = async (collection: string, id: string): Promise<string> => await readFile(path.join(s.repoDir, 'content', collection, `${id}.json`), 'utf8')
function historyCommits (): string[] {
  try { return git(s.repoDir, 'rev-list', 'refs/cms/history').trim().split('\n').filter(l => l !== '') } catch { return [] }
}

t.test('saves on different entries at once end as if made one by one: files, history documents, one linear history', async t => {
  const before = historyCommits().length
  const together = await Promise.all(Array.from({ length: ENTRIES }, async (_, i) => await save('notes', `e${i}`, 10 + i)))
  for (let i = 0; i < ENTRIES; i++) t.same(await save('serial', `e${i}`, 10 + i), together[i], `e${i}: the same answer`)
  t.ok(together.every(r => r.status === 200 && r.body.revision !== undefined), 'every save acknowledged')
  for (let i = 0; i < ENTRIES; i++) {
    t.equal(await fileOf('notes', `e${i}`), await fileOf('serial', `e${i}`), `e${i}: the same file`)
    t.same(snapshots('notes', `e${i}`), snapshots('serial', `e${i}`), `e${i}: the same history`)
    t.equal(snapshots('notes', `e${i}`).length, 1)
  }
  const added = historyCommits().length - before
  // One by one: a commit each. Together: at most one each, every commit with one parent (no lost branch).
  t.ok(added >= ENTRIES + 1 && added <= 2 * ENTRIES, `history commits added: ${added} (${ENTRIES} for the serial saves)`)
  t.equal(git(s.repoDir, 'rev-list', '--min-parents=2', 'refs/cms/history').trim(), '', 'a linear history')
  t.equal(git(s.repoDir, 'fsck', '--full', '--strict', '--no-progress', '--no-dangling').includes('error'), false, 'git fsck clean')
})

t.test('two saves of one entry at once are serialized: both land, in order, each with its own revision', async t => {
  const [a, b] = await Promise.all([save('notes', 'e0', 100), save('notes', 'e0', 101)])
  t.equal(a.status, 200)
  t.equal(b.status, 200)
  const [first, second] = a.body.revision! < b.body.revision! ? [100, 101] : [101, 100]
  t.equal(Math.abs(a.body.revision! - b.body.revision!), 1, 'consecutive revisions')
  t.same(JSON.parse(await fileOf('notes', 'e0')), { n: second, k: 0 }, 'the file holds the later save')
  const history = snapshots('notes', 'e0')
  t.same(history.slice(-2).map(h => (h.data as { n: number }).n), [10, first], 'each replaced state recorded once, in order')
  t.same(history.slice(-2).map(h => h.revision), [Math.min(a.body.revision!, b.body.revision!) - 1, Math.min(a.body.revision!, b.body.revision!)])
})

t.test('a save refused among saves arriving together changes nothing; the others land', async t => {
  const current = (await save('notes', 'e1', 200)).body.revision!
  const historyBefore = snapshots('notes', 'e1')
  const fileBefore = await fileOf('notes', 'e1')
  const results = await Promise.all([
    save('notes', 'e1', 201, current - 1),
    ...Array.from({ length: ENTRIES - 2 }, async (_, k) => await save('notes', `e${k + 2}`, 300 + k))
  ])
  t.equal(results[0]!.status, 409, 'the stale revision is refused')
  t.equal(results[0]!.body.code, 'revision_conflict')
  t.ok(results.slice(1).every(r => r.status === 200), 'the others are acknowledged')
  t.equal(await fileOf('notes', 'e1'), fileBefore, 'the refused entry\'s file is as it was')
  t.same(snapshots('notes', 'e1'), historyBefore, 'and its history too')
  for (let k = 0; k < ENTRIES - 2; k++) t.same(JSON.parse(await fileOf('notes', `e${k + 2}`)), { n: 300 + k, k: k + 2 })
  t.equal(git(s.repoDir, 'rev-list', '--min-parents=2', 'refs/cms/history').trim(), '', 'a linear history')
})

t.test('appends made in one turn share one commit; each file is put in place once its snapshot is on the ref', async t => {
  const dir = t.testdir({ notes: { 'a.json': '{"n":0}\n', 'b.json': '{"n":0}\n', 'c.json': '{"n":0}\n' } })
  git(dir, 'init', '-q')
  const store = new GitStore(path.join(dir, '.git'))
  t.teardown(async () => { await store.close() })
  const history = new HistoryStore({ git: store })
  const editor = { id: 'x', name: 'X' }
  // The first append starts a commit at once; the two made in the same turn wait for it and share the next.
  await Promise.all(['a', 'b', 'c'].map(async (id, i) => await history.append(
    [{ collection: 'notes', id, snapshot: { data: { n: 0 }, action: 'save', editor, revision: 1 } }],
    [{ path: path.join(dir, 'notes', `${id}.json`), data: `{"n":${i + 1}}\n` }]
  )))
  t.equal(git(dir, 'rev-list', '--count', 'refs/cms/history').trim(), '2', 'three appends, two commits')
  for (const [i, id] of ['a', 'b', 'c'].entries()) {
    t.equal(await readFile(path.join(dir, 'notes', `${id}.json`), 'utf8'), `{"n":${i + 1}}\n`)
    t.same((await history.list('notes', id)).map(h => h.data), [{ n: 0 }])
  }
  // An append whose file cannot be written fails alone; the other one of its turn lands.
  const results = await Promise.allSettled([
    history.append([{ collection: 'notes', id: 'a', snapshot: { data: { n: 1 }, action: 'save', editor, revision: 2 } }], [{ path: path.join(dir, 'notes', 'a.json'), data: '{"n":4}\n' }]),
    history.append([{ collection: 'notes', id: 'b', snapshot: { data: { n: 2 }, action: 'save', editor, revision: 2 } }], [{ path: path.join(dir, 'notes', 'b.json', 'inside-a-file.json'), data: '{}\n' }])
  ])
  t.equal(results[0].status, 'fulfilled')
  t.equal(results[1].status, 'rejected', 'a file that cannot be written fails its append')
  t.equal(await readFile(path.join(dir, 'notes', 'b.json'), 'utf8'), '{"n":2}\n', 'the refused entry\'s file is as it was')
  t.equal(await readFile(path.join(dir, 'notes', 'a.json'), 'utf8'), '{"n":4}\n')
  t.equal(git(dir, 'fsck', '--full', '--strict', '--no-progress', '--no-dangling').includes('error'), false, 'git fsck clean')
})
