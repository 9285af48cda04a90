import t from 'tap'
import { readdir, stat } from 'node:fs/promises'
import path from 'node:path'
import { startServer, writeHeaders, git, makeSite } from '../helpers/site.js'

const API = '/api/cms'
/** Folds only on a flush or a stop, so the snapshots below are in the journal when it matters. */
const NO_TIMED_FOLD = { intervalMs: 3_600_000, idleMs: 3_600_000 }

async function journalBytes (repo: string): Promise<number> {
  const dir = path.join(repo, '.git/cms/history-journal')
  let sum = 0
  for (const name of await readdir(dir).catch(() => [] as string[])) sum += (await stat(path.join(dir, name))).size
  return sum
}

const refNames = (repo: string): string => {
  try { return git(repo, 'ls-tree', '-r', '--name-only', 'refs/cms/history') } catch { return '' }
}

t.test('delete_collection with snapshots only in the journal: the history is gone from the ref, and stays gone after a restart', async t => {
  const repoDir = await makeSite(t)
  let s = await startServer(t, { repoDir, historyFold: NO_TIMED_FOLD })
  let cookie = await s.login()
  const mutate = async (cmd: Record<string, unknown>): Promise<Response> =>
    await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(cmd) })
  const history = async (c: string, id: string): Promise<Response> => await s.request(`${API}/history?collection=${c}&id=${id}`, { headers: { cookie } })
  const schema = { type: 'object', properties: { title: { type: 'string' } } }
  t.equal((await mutate({ type: 'create_collection', collection: 'events', schema })).status, 200)
  t.equal((await mutate({ type: 'put_entry', collection: 'events', id: 'party', data: { title: 'Party' } })).status, 200)
  t.equal((await mutate({ type: 'save_field', collection: 'events', id: 'party', field: 'title', value: 'Party!' })).status, 200)
  t.equal((await mutate({ type: 'save_field', collection: 'events', id: 'party', field: 'title', value: 'Party!!' })).status, 200)
  t.same(((await (await history('events', 'party')).json()) as { history: Array<{ data: unknown }> }).history.map(h => h.data), [{ title: 'Party' }, { title: 'Party!' }], 'served from the journal')
  t.notMatch(refNames(repoDir), /^events\//m, 'not folded yet')
  t.ok(await journalBytes(repoDir) > 0)

  t.equal((await mutate({ type: 'delete_collection', collection: 'events' })).status, 200)
  t.notMatch(refNames(repoDir), /^events\//m, 'no history of the collection on the ref')
  t.equal(await journalBytes(repoDir), 0, 'the journal was folded before the removal')
  // Re-created under the same name: no old history shows up.
  t.equal((await mutate({ type: 'create_collection', collection: 'events', schema })).status, 200)
  t.equal((await mutate({ type: 'put_entry', collection: 'events', id: 'party', data: { title: 'New' } })).status, 200)
  t.same(((await (await history('events', 'party')).json()) as { history: unknown[] }).history, [])

  await s.close()
  s = await startServer(t, { repoDir, historyFold: NO_TIMED_FOLD })
  cookie = await s.login()
  t.same(((await (await history('events', 'party')).json()) as { history: unknown[] }).history, [], 'nothing comes back after a restart')
  t.notMatch(refNames(repoDir), /^events\//m)
  await s.close()
  t.equal(git(repoDir, 'fsck', '--no-progress').includes('error'), false)
})

t.test('a save is served from the journal at once; a stop folds it into refs/cms/history and leaves the journal empty', async t => {
  const repoDir = await makeSite(t, { 'content/notes/a.json': '{"n":0}\n' })
  const s = await startServer(t, { repoDir, historyFold: NO_TIMED_FOLD, config: { collections: { notes: { format: 'json' } } } })
  const cookie = await s.login()
  const save = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'save_field', collection: 'notes', id: 'a', field: 'n', value: 1 }) })
  t.equal(save.status, 200)
  const served = ((await (await s.request(`${API}/history?collection=notes&id=a`, { headers: { cookie } })).json()) as { history: Array<{ data: unknown }> }).history
  t.same(served.map(h => h.data), [{ n: 0 }])
  t.equal(refNames(repoDir), '', 'the ref does not exist yet')
  await s.close()
  t.match(refNames(repoDir), /^notes\/[0-9a-f]{2}\/a\.json$/m, 'on the ref after the stop')
  t.equal(await journalBytes(repoDir), 0)
})
