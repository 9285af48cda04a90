import t from 'tap'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { startServer, repoFingerprint, writeHeaders } from '../helpers/site.js'

// A save validates the new data once: the index's row records the issues the save's own check found
// (issue 18), which must be exactly what a read of the file finds.

const API = '/api/cms'

t.test('the row of a saved entry carries the issues of its new data: stored ones kept, fixed ones gone, new ones refused', async t => {
  const schema = { type: 'object', required: ['title'], properties: { title: { type: 'string' }, n: { type: 'integer' }, body: { type: 'string' } } }
  const s = await startServer(t, {
    config: { collections: { items: { format: 'json', schema }, posts: { format: 'md', schema } } },
    files: { 'content/items/bad.json': '{"title":"Bad","n":"seven"}\n', 'content/posts/p.md': '---\ntitle: P\nn: seven\n---\nBody\n' }
  })
  const cookie = await s.login()
  const save = async (collection: string, id: string, field: string, value: unknown): Promise<Response> =>
    await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'save_field', collection, id, field, value }) })
  const issuesOf = async (collection: string, id: string): Promise<string[] | undefined> => {
    const body = await (await s.request(`${API}/entries?collection=${collection}&id=${id}`, { headers: { cookie } })).json()
    return (body.entries[0].validationIssues as Array<{ path: string }> | undefined)?.map(i => i.path).sort()
  }
  for (const [collection, id] of [['items', 'bad'], ['posts', 'p']] as const) {
    t.same(await issuesOf(collection, id), ['n'], `${collection}: the stored issue`)
    t.equal((await save(collection, id, 'title', 'Renamed')).status, 200, `${collection}: a stored issue does not block a save`)
    t.same(await issuesOf(collection, id), ['n'], `${collection}: still there after the save`)
    t.equal((await save(collection, id, 'n', 3)).status, 200, `${collection}: the issue fixed`)
    t.same(await issuesOf(collection, id), undefined, `${collection}: no issues now`)
    const before = await repoFingerprint(s.repoDir)
    const refused = await save(collection, id, 'n', 'eight')
    t.equal(refused.status, 400, `${collection}: a new issue is refused`)
    t.equal(await repoFingerprint(s.repoDir), before, `${collection}: nothing changed`)
    t.same(await issuesOf(collection, id), undefined, `${collection}: still none`)
  }
  // The same issues as reading the file afresh gives (a new server on the same repository).
  await s.close()
  const again = await startServer(t, { repoDir: s.repoDir, config: { collections: { items: { format: 'json', schema }, posts: { format: 'md', schema } } } })
  const cookie2 = await again.login()
  for (const [collection, id] of [['items', 'bad'], ['posts', 'p']] as const) {
    const body = await (await again.request(`${API}/entries?collection=${collection}&id=${id}`, { headers: { cookie: cookie2 } })).json()
    t.equal(body.entries.length, 1)
    t.notOk('validationIssues' in body.entries[0], `${collection}: none after a restart either`)
  }
  t.match(await readFile(path.join(s.repoDir, 'content/posts/p.md'), 'utf8'), /n: 3/)
})
