import t from 'tap'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { crc32 } from 'node:zlib'
import { makeRepoWithStore } from '../helpers/git-repo.js'
import { HistoryStore, type Snapshot } from '../../lib/storage/history-store.js'

const editor = { id: 'alice', name: 'Alice' }

/** One record framed as the earlier version's history journal wrote it: "CMSJ" | length | crc32 | payload. */
function frame (collection: string, id: string, snapshot: Snapshot): Buffer {
  const payload = Buffer.from(JSON.stringify({ c: collection, i: id, s: snapshot }))
  const head = Buffer.alloc(12)
  head.writeUInt32LE(0x4a534d43, 0)
  head.writeUInt32LE(payload.length, 4)
  head.writeUInt32LE(crc32(payload, crc32(head.subarray(4, 8))), 8)
  return Buffer.concat([head, payload])
}

const snap = (ts: number, n: number): Snapshot => ({ ts, data: { n }, action: 'save', editor, revision: n })

t.test('the journal an earlier version left is folded into refs/cms/history at open, every snapshot kept, then deleted', async t => {
  const { gitDir, git } = makeRepoWithStore(t)
  // Already on the ref before the stop: a snapshot the journal also holds (folded, not yet dropped).
  await new HistoryStore({ git }).append([{ collection: 'posts', id: 'a', snapshot: { data: { n: 0 }, action: 'save', editor } }])
  const onRef = (await new HistoryStore({ git }).list('posts', 'a'))[0]!
  const dir = path.join(gitDir, 'cms', 'history-journal')
  mkdirSync(dir, { recursive: true })
  const first = [frame('posts', 'a', onRef), frame('posts', 'a', snap(onRef.ts + 1, 1)), frame('posts', 'b', snap(1000, 7))]
  writeFileSync(path.join(dir, '0000000000000001.journal'), Buffer.concat(first))
  // A second segment whose last frame is torn (a crash mid-write: never acknowledged), and a bad record.
  const torn = frame('posts', 'a', snap(onRef.ts + 3, 3)).subarray(0, 20)
  writeFileSync(path.join(dir, '0000000000000002.journal'), Buffer.concat([frame('posts', 'a', snap(onRef.ts + 2, 2)), frame('Bad Name', 'x', snap(5, 5)), frame('pages', 'c', snap(2000, 9)), torn]))
  writeFileSync(path.join(dir, '0000000000000003.journal'), Buffer.alloc(0))

  const history = new HistoryStore({ git, journalDir: dir })
  await history.open()
  t.same((await history.list('posts', 'a')).map(s => s.data.n), [0, 1, 2], 'the ref\'s snapshot once, then the journal\'s in ts order')
  t.same(await history.list('posts', 'b'), [snap(1000, 7)])
  t.same(await history.list('pages', 'c'), [snap(2000, 9)], 'records after a refused one are kept')
  t.notOk(existsSync(dir), 'the journal is gone')
  // A second open (or start) has nothing to do.
  const head = await git.readRef('refs/cms/history')
  await new HistoryStore({ git, journalDir: dir }).open()
  t.equal(await git.readRef('refs/cms/history'), head)
})
