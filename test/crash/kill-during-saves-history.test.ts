import t from 'tap'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { makeSite, git } from '../helpers/site.js'
import { spawnServer, loginAt } from '../helpers/spawn-server.js'
import { saveUntilKilled } from '../helpers/save-burst.js'
import { shardOf } from '../../lib/storage/ref-tree-store.js'

const API = '/api/cms'
const ENTRIES = 8

function onRef (repo: string, id: string): Array<{ ts: number, data: { n: number } }> {
  try {
    return (JSON.parse(git(repo, 'show', `refs/cms/history:notes/${shardOf(id)}/${id}.json`)) as { snapshots: Array<{ ts: number, data: { n: number } }> }).snapshots
  } catch {
    return []
  }
}

t.test('kill -9 during concurrent saves: the snapshot of every acknowledged save is on refs/cms/history at the kill, and git fsck is clean', async t => {
  const files: Record<string, string> = { 'cms.config.yaml': 'collections:\n  notes:\n    format: json\n' }
  for (let i = 0; i < ENTRIES; i++) files[`content/notes/e${i}.json`] = '{"n":0}\n'
  const repo = await makeSite(t, files, { fixtures: false })
  const first = await spawnServer(t, repo)
  const cookie = await loginAt(first.url)
  const acked = await saveUntilKilled(first, cookie, { collection: 'notes', entries: ENTRIES, minAcked: 5 })
  t.ok(acked.every(n => n > 0), `every client had saves acknowledged: ${acked.join(',')}`)
  // Before any restart: what the killed process left is what git holds.
  t.equal(git(repo, 'fsck', '--full', '--strict', '--no-progress', '--no-dangling').includes('error'), false, 'git fsck --full --strict clean at the kill')
  for (let i = 0; i < ENTRIES; i++) {
    const ns = onRef(repo, `e${i}`).map(s => s.data.n)
    // Save k replaced the state k - 1: each acknowledged save's replaced state is there (the newest 50).
    const expected = Array.from({ length: acked[i]! }, (_, k) => k).slice(-50)
    t.same(expected.filter(n => !ns.includes(n)), [], `e${i}: every acknowledged save's snapshot is on the ref (${ns.length} snapshots)`)
  }

  const second = await spawnServer(t, repo)
  const cookie2 = await loginAt(second.url)
  for (let i = 0; i < ENTRIES; i++) {
    const v = (JSON.parse(await readFile(path.join(repo, `content/notes/e${i}.json`), 'utf8')) as { n: number }).n
    t.ok(v === acked[i] || v === acked[i]! + 1, `e${i}: file holds ${v}, last acknowledged ${acked[i]}`)
    const history = (await (await fetch(`${second.url}${API}/history?collection=notes&id=e${i}`, { headers: { cookie: cookie2 } })).json()).history as Array<{ ts: number, data: { n: number } }>
    t.same(history, onRef(repo, `e${i}`), `e${i}: served as on the ref`)
    t.ok(history.every((h, k) => k === 0 || h.ts > history[k - 1]!.ts), `e${i}: ts strictly increasing`)
  }
  t.equal(await second.kill('SIGTERM'), 0)
  t.equal(git(repo, 'fsck', '--full', '--strict', '--no-progress').includes('error'), false, 'git fsck clean after the restart')
})
