import t from 'tap'
import { startServer } from '../helpers/site.js'

const API = '/api/cms'

t.test('small collections are indexed in this thread; large ones in a worker (their full-text index in a child process)', async t => {
  let workers = 0
  const count = (): void => { workers++ }
  process.on('worker', count)
  t.teardown(() => { process.off('worker', count) })
  const small = await startServer(t)
  await small.cms.ready
  const cookie = await small.login()
  t.equal((await small.request(`${API}/entries?collection=posts`, { headers: { cookie } })).status, 200)
  t.equal((await small.request(`${API}/entries?collection=posts&q=hello`, { headers: { cookie } })).status, 200)
  t.equal(workers, 0, 'no worker for the fixtures (a dozen files per collection), nor for their full-text index')
  await small.close()

  const many: Record<string, string> = {}
  for (let i = 0; i < 200; i++) many[`content/many/e${i}.json`] = JSON.stringify({ title: `Entry ${i}` }) + '\n'
  const large = await startServer(t, { files: many })
  await large.cms.ready
  const listed = await large.request(`${API}/entries?collection=many&pageSize=5`, { headers: { cookie: await large.login() } })
  t.equal(listed.status, 200)
  t.match(await listed.json(), { pagination: { total: 200 } })
  // A q waits for the full-text index, built by a child process from 200 entries on (lib/search/
  // segment-reader.ts `writeSegmentFile`: its memory goes back to the system when it exits), not a worker.
  const found = await large.request(`${API}/entries?collection=many&q=entry`, { headers: { cookie: await large.login() } })
  t.match(await found.json(), { pagination: { total: 200 } })
  t.equal(workers, 1, 'one worker for the collection index of 200 files, none for its full-text index')
})
