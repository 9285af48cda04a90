import t from 'tap'
import { startServer, writeHeaders } from '../helpers/site.js'

const API = '/api/cms'

t.test('the history of a large entry keeps the newest snapshots within its size limit', async t => {
  // Each save read and wrote the whole history on the event loop: 50 snapshots of 1 MiB held it a second a save.
  const s = await startServer(t, { files: { 'cms.config.yaml': 'collections:\n  notes:\n    format: json\n' } })
  const cookie = await s.login()
  const text = 'word '.repeat(180_000)
  for (let n = 1; n <= 7; n++) {
    const res = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'put_entry', collection: 'notes', id: 'long', data: { n, text } }) })
    t.equal(res.status, 200, `save ${n}`)
  }
  const res = await s.request(`${API}/history?collection=notes&id=long`, { headers: { cookie } })
  t.equal(res.status, 200)
  const { history } = await res.json() as { history: Array<{ data: { n: number } }> }
  t.same(history.map(snapshot => snapshot.data.n), [3, 4, 5, 6], 'the four newest of six (900 KB each)')
  t.ok(JSON.stringify(history).length <= 4 * 1024 * 1024, 'together at most 4 MiB')
})
