import t from 'tap'
import { readFile, readdir, stat } from 'node:fs/promises'
import path from 'node:path'
import { makeSite, git } from '../helpers/site.js'
import { spawnServer, loginAt } from '../helpers/spawn-server.js'
import { saveUntilKilled } from '../helpers/save-burst.js'
import { shardOf } from '../../lib/storage/ref-tree-store.js'

const API = '/api/cms'
const ENTRIES = 8

/** Bytes of records in the history journal's segments. */
async function journalBytes (repo: string): Promise<number> {
  const dir = path.join(repo, '.git/cms/history-journal')
  let sum = 0
  for (const name of await readdir(dir).catch(() => [] as string[])) sum += (await stat(path.join(dir, name))).size
  return sum
}

function onRef (repo: string, id: string): Array<{ data: { n: number } }> {
  try {
    return (JSON.parse(git(repo, 'show', `refs/cms/history:notes/${shardOf(id)}/${id}.json`)) as { snapshots: Array<{ data: { n: number } }> }).snapshots
  } catch {
    return []
  }
}

t.test('kill -9 during concurrent saves with the history journal: every acknowledged save is in its file or in the history served after the restart, and on refs/cms/history after the fold', async t => {
  const files: Record<string, string> = { 'cms.config.yaml': 'collections:\n  notes:\n    format: json\n' }
  for (let i = 0; i < ENTRIES; i++) files[`content/notes/e${i}.json`] = '{"n":0}\n'
  const repo = await makeSite(t, files, { fixtures: false })
  const first = await spawnServer(t, repo)
  const cookie = await loginAt(first.url)
  const acked = await saveUntilKilled(first, cookie, { collection: 'notes', entries: ENTRIES, minAcked: 5 })
  t.ok(acked.every(n => n > 0), `every client had saves acknowledged: ${acked.join(',')}`)
  // What the ref held at the kill (folds lag the saves): the journal holds the rest.
  const unfoldedAtKill = Array.from({ length: ENTRIES }, (_, i) => acked[i]! - onRef(repo, `e${i}`).length)
  t.comment(`journal bytes at the kill: ${await journalBytes(repo)}; acknowledged saves not on the ref yet per entry: ${unfoldedAtKill.join(',')}`)

  const second = await spawnServer(t, repo)
  const cookie2 = await loginAt(second.url)
  const served: Array<Array<{ data: { n: number } }>> = []
  for (let i = 0; i < ENTRIES; i++) {
    const text = await readFile(path.join(repo, `content/notes/e${i}.json`), 'utf8')
    const v = (JSON.parse(text) as { n: number }).n
    t.ok(v === acked[i] || v === acked[i]! + 1, `e${i}: file holds ${v}, last acknowledged ${acked[i]}`)
    const history = (await (await fetch(`${second.url}${API}/history?collection=notes&id=e${i}`, { headers: { cookie: cookie2 } })).json()).history as Array<{ ts: number, data: { n: number } }>
    // Save k replaced the state k - 1: each acknowledged save's replaced state is there (the newest 50).
    const ns = history.map(h => h.data.n)
    const expected = Array.from({ length: acked[i]! }, (_, k) => k).slice(-50)
    const missing = expected.filter(n => !ns.includes(n))
    t.same(missing, [], `e${i}: the snapshot of every acknowledged save is served (${ns.length} snapshots, last ${ns.at(-1)})`)
    t.ok(history.every((h, k) => k === 0 || h.ts > history[k - 1]!.ts), `e${i}: ts strictly increasing`)
    t.ok(new Set(ns).size === ns.length, `e${i}: no snapshot twice`)
    t.ok(onRef(repo, `e${i}`).length >= Math.min(50, acked[i]!), `e${i}: the journal was folded into the ref at the start`)
    served.push(history)
  }
  t.equal(await journalBytes(repo), 0, 'the journal is empty once folded at the start')
  // A clean stop: the ref holds exactly what was served, the journal stays empty.
  t.equal(await second.kill('SIGTERM'), 0)
  for (let i = 0; i < ENTRIES; i++) t.same(onRef(repo, `e${i}`), served[i], `e${i}: refs/cms/history holds what GET /history served`)
  t.equal(await journalBytes(repo), 0)
  t.equal(git(repo, 'fsck', '--no-progress').includes('error'), false, 'git fsck clean')
})
