import t from 'tap'
import { randomBytes } from 'node:crypto'
import { startServer, writeHeaders } from '../helpers/site.js'
import { holdsDuring } from '../helpers/main-thread-cpu.js'

const API = '/api/cms'

t.test('the history of a large entry keeps the newest snapshots within its size limit, without holding the event loop', async t => {
  // Each save read and wrote the whole history on the event loop: 50 snapshots of 1 MiB held it a second a save.
  // Then, with the history capped, its 4 MiB document was still deflated on the event loop (40 ms) after git's
  // answer was read by copying every 64 KiB chunk onto the ones before (20 ms): 90-160 ms of CPU in one turn.
  const s = await startServer(t, { files: { 'cms.config.yaml': 'collections:\n  notes:\n    format: json\n' } })
  const cookie = await s.login()
  // Random text, which deflate cannot shrink quickly (repeated words took 3 ms a save).
  const text = randomBytes(450_000).toString('hex')
  const save = async (n: number): Promise<void> => {
    const res = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'put_entry', collection: 'notes', id: 'long', data: { n, text: text.slice(n) } }) })
    t.equal(res.status, 200, `save ${n}`)
  }
  for (let n = 1; n <= 5; n++) await save(n)
  const holds = await holdsDuring(async () => { for (let n = 6; n <= 9; n++) await save(n) })
  const res = await s.request(`${API}/history?collection=notes&id=long`, { headers: { cookie } })
  t.equal(res.status, 200)
  const { history } = await res.json() as { history: Array<{ data: { n: number, text: string } }> }
  t.same(history.map(snapshot => snapshot.data.n), [5, 6, 7, 8], 'the four newest of eight (900 KB each)')
  t.ok(JSON.stringify(history).length <= 4 * 1024 * 1024, 'together at most 4 MiB')
  t.equal(history.at(-1)?.data.text, text.slice(8), 'each snapshot whole')
  if (holds.cpuMs !== null) t.ok(holds.cpuMs < 100, `${holds.cpuMs} ms of CPU in one turn at most (the contract's 100 ms)`)
})
