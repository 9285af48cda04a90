import t from 'tap'
import { startServer, writeHeaders, git, makeSite } from '../helpers/site.js'

const API = '/api/cms'

const refNames = (repo: string): string => {
  try { return git(repo, 'ls-tree', '-r', '--name-only', 'refs/cms/history') } catch { return '' }
}

t.test('a save\'s snapshot is on refs/cms/history when the save is answered', async t => {
  const repoDir = await makeSite(t, { 'content/notes/a.json': '{"n":0}\n' })
  const s = await startServer(t, { repoDir, config: { collections: { notes: { format: 'json' } } } })
  const cookie = await s.login()
  const save = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 1 }) })
  t.equal(save.status, 200)
  t.match(refNames(repoDir), /^notes\/[0-9a-f]{2}\/a\.json$/m, 'on the ref before any stop')
  const served = ((await (await s.request(`${API}/history?collection=notes&id=a`, { headers: { cookie } })).json()) as { history: Array<{ data: unknown }> }).history
  t.same(served.map(h => h.data), [{ n: 0 }])
  await s.close()
  t.equal(git(repoDir, 'fsck', '--full', '--strict', '--no-progress').includes('error'), false)
})

t.test('delete_collection removes its history from the ref, and it stays gone after a restart', async t => {
  const repoDir = await makeSite(t)
  let s = await startServer(t, { repoDir })
  let cookie = await s.login()
  const mutate = async (cmd: Record<string, unknown>): Promise<Response> =>
    await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(cmd) })
  const history = async (c: string, id: string): Promise<Response> => await s.request(`${API}/history?collection=${c}&id=${id}`, { headers: { cookie } })
  const schema = { type: 'object', properties: { title: { type: 'string' } } }
  t.equal((await mutate({ type: 'create_collection', collection: 'events', schema })).status, 200)
  t.equal((await mutate({ type: 'put_entry', collection: 'events', id: 'party', data: { title: 'Party' } })).status, 200)
  t.equal((await mutate({ type: 'save_field', collection: 'events', id: 'party', field: 'title', value: 'Party!' })).status, 200)
  t.match(refNames(repoDir), /^events\//m)
  t.equal((await mutate({ type: 'delete_collection', collection: 'events' })).status, 200)
  t.notMatch(refNames(repoDir), /^events\//m, 'no history of the collection on the ref')
  t.equal((await mutate({ type: 'create_collection', collection: 'events', schema })).status, 200)
  t.equal((await mutate({ type: 'put_entry', collection: 'events', id: 'party', data: { title: 'New' } })).status, 200)
  t.same(((await (await history('events', 'party')).json()) as { history: unknown[] }).history, [], 'a re-created collection starts fresh')
  await s.close()
  s = await startServer(t, { repoDir })
  cookie = await s.login()
  t.same(((await (await history('events', 'party')).json()) as { history: unknown[] }).history, [], 'nothing comes back after a restart')
  await s.close()
})
