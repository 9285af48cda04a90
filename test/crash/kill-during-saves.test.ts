import t from 'tap'
import { readFile, readdir } from 'node:fs/promises'
import path from 'node:path'
import { makeSite, git } from '../helpers/site.js'
import { spawnServer, loginAt } from '../helpers/spawn-server.js'
import { saveUntilKilled } from '../helpers/save-burst.js'

const API = '/api/cms'
const ENTRIES = 8

t.test('kill -9 during a burst of saves leaves every entry before or after a save, consistent with history', async t => {
  const files: Record<string, string> = { 'cms.config.yaml': 'collections:\n  notes:\n    format: json\n' }
  for (let i = 0; i < ENTRIES; i++) files[`content/notes/e${i}.json`] = '{"n":0}\n'
  const repo = await makeSite(t, files, { fixtures: false })
  const first = await spawnServer(t, repo)
  const cookie = await loginAt(first.url)
  // Kill in the middle of the burst: once every client has had a few saves acknowledged.
  const acked = await saveUntilKilled(first, cookie, { collection: 'notes', entries: ENTRIES, minAcked: 3 })
  t.ok(acked.every(n => n > 0), `every client had saves acknowledged: ${acked.join(',')}`)

  const second = await spawnServer(t, repo)
  const cookie2 = await loginAt(second.url)
  // The sweep of a predecessor's temp files runs once the first index builds are done (issue 18).
  const leftovers = async (): Promise<boolean> => (await readdir(path.join(repo, 'content/notes'))).some(f => f.startsWith('.cms-tmp-'))
  for (const until = Date.now() + 20_000; await leftovers() && Date.now() < until;) await new Promise(resolve => setTimeout(resolve, 50))
  t.notOk(await leftovers(), 'no temp files left')
  for (let i = 0; i < ENTRIES; i++) {
    const text = await readFile(path.join(repo, `content/notes/e${i}.json`), 'utf8')
    const v = (JSON.parse(text) as { n: number }).n
    t.ok(v === acked[i] || v === acked[i]! + 1, `e${i}: file holds ${v}, last acknowledged ${acked[i]}`)
    const entry = (await (await fetch(`${second.url}${API}/entries?collection=notes&id=e${i}`, { headers: { cookie: cookie2 } })).json()).entries[0]
    t.equal(entry.data.n, v)
    t.equal(entry.revision, v + 1, 'one revision per save')
    const history = (await (await fetch(`${second.url}${API}/history?collection=notes&id=e${i}`, { headers: { cookie: cookie2 } })).json()).history
    const last = history.at(-1).data.n
    t.ok(last === v - 1 || last === v, `e${i}: last snapshot ${last} is the state before the last save (or the save that never landed)`)
    const saved = await fetch(`${second.url}${API}/mutate`, {
      method: 'POST',
      headers: { cookie: cookie2, 'content-type': 'application/json', 'x-cms-request': '1' },
      body: JSON.stringify({ type: 'save_field', collection: 'notes', id: `e${i}`, field: 'n', value: -1, expectedRevision: entry.revision })
    })
    t.equal(saved.status, 200, 'writes work after the restart')
  }
  // Once the server is down: a background pack merge may remove a pack while fsck reads it.
  await second.kill('SIGTERM')
  t.equal(git(repo, 'fsck', '--no-progress').includes('error'), false)
})
