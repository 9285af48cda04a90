import t, { type Test } from 'tap'
import path from 'node:path'
import { makeRepo, gitIn } from '../helpers/git-repo.js'
import { PackStore } from '../../lib/storage/pack-store.js'
import { HistoryStore, HISTORY_REF, MAX_SNAPSHOTS, type Snapshot } from '../../lib/storage/history-store.js'
import { shardOf } from '../../lib/storage/ref-tree-store.js'

// The journal's fold writes an entry's history document by editing its text (issue 18, ninth
// pass): the snapshots' texts are taken from the journal records as they are, and a document this
// process wrote is appended to without being decoded. The text must be exactly what decoding,
// merging and encoding the document gives.

const editor = { id: 'alice', name: 'Alice \u00e9\u{1F600}' }
/** Data whose JSON text is not trivial: integer-like keys (ordered first), a nested `ts`, escapes. */
const snap = (n: number): Omit<Snapshot, 'ts'> => ({
  data: { title: `t"${n}\\\u2028`, 10: 'ten', 2: 'two', nested: { ts: n, list: [{ ts: 1 }, { a: null }] }, body: 'x'.repeat(n * 37) },
  action: 'save',
  editor,
  revision: n
})
const MANUAL = { foldIntervalMs: 3_600_000, foldIdleMs: 3_600_000 }

function setup (t: Test): { dir: string, open: () => HistoryStore } {
  const { dir, gitDir } = makeRepo(t)
  const journalDir = path.join(gitDir, 'cms', 'history-journal')
  return { dir, open: () => new HistoryStore({ gitDir, packs: new PackStore(gitDir), journalDir, ...MANUAL }) }
}

/**
 * Runs `work` with JSON.parse watched: the history documents it decoded (their first characters).
 * @returns one string per document decoded
 */
async function decodedDuring (work: () => Promise<void>): Promise<string[]> {
  const parse = JSON.parse
  const decoded: string[] = []
  JSON.parse = ((text: string, reviver?: (key: string, value: unknown) => unknown) => {
    if (typeof text === 'string' && text.startsWith('{"snapshots":')) decoded.push(text.slice(0, 40))
    return parse(text, reviver)
  }) as typeof JSON.parse
  try {
    await work()
  } finally {
    JSON.parse = parse
  }
  return decoded
}

/** The entry's document on the ref, as git stores it. */
function blobOf (dir: string, id: string): string {
  return gitIn(dir, ['cat-file', 'blob', `${HISTORY_REF}:posts/${shardOf(id)}/${id}.json`]) + '\n'
}

t.test('the folded document is exactly the encoded merge, across the 50-snapshot cap, folds and restarts', async t => {
  const { dir, open } = setup(t)
  let history = open()
  await history.open()
  const all: Snapshot[] = []
  let n = 0
  for (const [round, batch] of [[0, 1], [1, 7], [2, 30], [3, 20], [4, 1], [5, 55], [6, 3]] as const) {
    // Round 4 on: a new process, which knows nothing of the documents the one before wrote.
    if (round === 4) { await history.close(); history = open(); await history.open() }
    for (let i = 0; i < batch; i++) all.push(...await history.append([{ collection: 'posts', id: 'hello', snapshot: snap(++n) }]))
    await history.flush()
    const expected = all.slice(-MAX_SNAPSHOTS)
    // git's own output drops the final newline: blobOf adds it back.
    t.equal(blobOf(dir, 'hello'), `${JSON.stringify({ snapshots: expected })}\n`, `round ${round}: the document's text`)
    t.same(await history.list('posts', 'hello'), expected, `round ${round}: listed`)
  }
  await history.close()
})

t.test('a fold appends to a document this process wrote without decoding it', async t => {
  const { dir, open } = setup(t)
  const history = open()
  await history.open()
  for (let i = 1; i <= 12; i++) await history.append([{ collection: 'posts', id: 'a', snapshot: snap(i) }, { collection: 'posts', id: 'b', snapshot: snap(i) }])
  await history.flush()
  for (let i = 13; i <= 15; i++) await history.append([{ collection: 'posts', id: 'a', snapshot: snap(i) }, { collection: 'posts', id: 'b', snapshot: snap(i) }])
  const decoded = await decodedDuring(async () => { await history.flush() })
  t.same(decoded, [], 'no history document decoded by the fold')
  for (const id of ['a', 'b']) {
    const list = await history.list('posts', id)
    t.same(list.map(s => s.revision), Array.from({ length: 15 }, (_, i) => i + 1))
    t.equal(blobOf(dir, id), `${JSON.stringify({ snapshots: list })}\n`)
  }
  await history.close()
})

t.test('a document written by someone else is decoded and merged as before', async t => {
  const { dir, open } = setup(t)
  let history = open()
  await history.open()
  const first = await history.append([{ collection: 'posts', id: 'x', snapshot: snap(1) }])
  await history.close()
  // An outside writer replaces the document with an equal one in another spelling (indented), plus a
  // snapshot that is not one (dropped on decode), and a snapshot whose ts is newer than ours.
  const later: Snapshot = { ...snap(2), ts: first[0]!.ts + 1000 }
  const text = JSON.stringify({ snapshots: [first[0], { nope: true }, later] }, null, 2)
  const blob = gitIn(dir, ['hash-object', '-w', '--stdin'], text)
  const shard = shardOf('x')
  const shardTree = gitIn(dir, ['mktree'], `100644 blob ${blob}\tx.json\n`)
  const coll = gitIn(dir, ['mktree'], `040000 tree ${shardTree}\t${shard}\n`)
  const root = gitIn(dir, ['mktree'], `040000 tree ${coll}\tposts\n`)
  const commit = gitIn(dir, ['commit-tree', root, '-m', 'outside'])
  gitIn(dir, ['update-ref', HISTORY_REF, commit])
  history = open()
  await history.open()
  const [third] = await history.append([{ collection: 'posts', id: 'x', snapshot: snap(3) }])
  t.ok(third!.ts > later.ts, 'ts after the outside snapshot')
  await history.flush()
  const expected = [first[0], later, third]
  t.equal(blobOf(dir, 'x'), `${JSON.stringify({ snapshots: expected })}\n`)
  t.same(await history.list('posts', 'x'), expected)
  await history.close()
})

t.test('appends while a fold is written and after it decode no history document this process wrote', async t => {
  const { open } = setup(t)
  const history = open()
  await history.open()
  const ids = Array.from({ length: 10 }, (_, i) => `e${i}`)
  for (let i = 1; i <= 3; i++) await Promise.all(ids.map(async id => await history.append([{ collection: 'posts', id, snapshot: snap(i) }])))
  await history.flush()
  await history.append([{ collection: 'posts', id: 'e0', snapshot: snap(4) }])
  let appends = 0
  const decoded = await decodedDuring(async () => {
    // Saves of the other entries go on while the fold's commit is written (the ref moves before
    // the fold learns its id) and after it.
    let folded = false
    const fold = history.flush().then(() => { folded = true })
    for (let n = 5; !folded || appends < 40; n++) {
      await history.append([{ collection: 'posts', id: ids[1 + (n % 9)]!, snapshot: snap(n) }])
      appends++
    }
    await fold
  })
  t.same(decoded, [], `no document decoded over ${appends} appends`)
  for (const id of ids) {
    const list = await history.list('posts', id)
    t.ok(list.every((s, i) => i === 0 || s.ts > list[i - 1]!.ts), `${id}: ts strictly increasing`)
  }
  await history.close()
})
