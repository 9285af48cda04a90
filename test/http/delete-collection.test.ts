import t from 'tap'
import { access, mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { startServer, writeHeaders, git } from '../helpers/site.js'

const API = '/api/cms'

async function exists (file: string): Promise<boolean> {
  try { await access(file); return true } catch { return false }
}

t.test('delete_collection removes only the entries, the definition and the history; other files stay', async t => {
  const s = await startServer(t)
  const cookie = await s.login()
  const mutate = async (cmd: Record<string, unknown>): Promise<Response> =>
    await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(cmd) })
  const schema = { type: 'object', properties: { title: { type: 'string' } } }
  t.equal((await mutate({ type: 'create_collection', collection: 'events', schema })).status, 200)
  t.equal((await mutate({ type: 'put_entry', collection: 'events', id: 'launch', data: { title: 'Launch' } })).status, 200)
  t.equal((await mutate({ type: 'put_entry', collection: 'events', id: 'party', data: { title: 'Party' } })).status, 200)
  t.equal((await mutate({ type: 'save_field', collection: 'events', id: 'party', field: 'title', value: 'Party!' })).status, 200)
  const dir = path.join(s.repoDir, 'content/events')
  await writeFile(path.join(dir, 'keep.txt'), 'not an entry\n')
  await mkdir(path.join(dir, 'sub'))
  await writeFile(path.join(dir, 'sub/important.md'), '# not an entry of a json collection\n')

  t.equal((await mutate({ type: 'delete_collection', collection: 'events' })).status, 200)
  t.notOk(await exists(path.join(dir, 'launch.json')), 'entry removed')
  t.notOk(await exists(path.join(dir, 'party.json')), 'entry removed')
  t.notOk(await exists(path.join(s.repoDir, '.cms/collections/events.json')), 'definition removed')
  t.equal(await readFile(path.join(dir, 'keep.txt'), 'utf8'), 'not an entry\n', 'keep.txt stays')
  t.equal(await readFile(path.join(dir, 'sub/important.md'), 'utf8'), '# not an entry of a json collection\n', 'sub/important.md stays')
  t.notMatch(git(s.repoDir, 'ls-tree', '-r', '--name-only', 'refs/cms/history'), /^events\//m, 'history removed')

  // A folder that held only entries is removed with them.
  t.equal((await mutate({ type: 'create_collection', collection: 'talks', schema })).status, 200)
  t.equal((await mutate({ type: 'put_entry', collection: 'talks', id: 'one', data: { title: 'One' } })).status, 200)
  t.equal((await mutate({ type: 'delete_collection', collection: 'talks' })).status, 200)
  t.notOk(await exists(path.join(s.repoDir, 'content/talks')), 'an empty folder is removed')
})
