import t from 'tap'
import { startServer, writeHeaders } from '../helpers/site.js'

const API = '/api/cms'

const config = { collections: { posts: { format: 'md' as const } } }
const files = { 'content/posts/hello.md': '---\ntitle: Hello\n---\nBody\n' }

// A save replaces the entry's file before it records the new revision; a list or read arriving in
// between must wait for that record, not take the new file for an outside change (which would spend a
// revision of its own, so the saver would be answered one revision too far).
t.test('lists and reads racing saves never spend a revision of their own', async t => {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  const mutate = async (body: unknown): Promise<{ ok: boolean, revision: number }> =>
    await (await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })).json() as { ok: boolean, revision: number }
  let saving = true
  const readers = Array.from({ length: 4 }, async (_, i) => {
    let reads = 0
    while (saving) {
      const query = i % 2 === 0 ? 'collection=posts&pageSize=100' : 'collection=posts&id=hello'
      const res = await s.request(`${API}/entries?${query}`, { headers: { cookie } })
      await res.arrayBuffer()
      reads++
    }
    return reads
  })
  const created: number[] = []
  const saved: number[] = []
  try {
    for (let n = 0; n < 15; n++) {
      created.push((await mutate({ type: 'put_entry', collection: 'posts', id: `new-${n}`, data: { title: `New ${n}`, body: 'Text\n' } })).revision)
      saved.push((await mutate({ type: 'save_field', collection: 'posts', id: 'hello', field: 'title', value: `Hello ${n}` })).revision)
    }
  } finally {
    saving = false
  }
  const reads = (await Promise.all(readers)).reduce((a, b) => a + b, 0)
  t.ok(reads > 30, `reads ran alongside the saves (${reads})`)
  t.same(created, created.map(() => 1), 'every new entry starts at revision 1')
  t.same(saved, saved.map((_, n) => n + 2), 'each save of an entry is exactly one revision')
  const list = await (await s.request(`${API}/entries?collection=posts&id=hello`, { headers: { cookie } })).json() as { entries: Array<{ revision: number }> }
  t.equal(list.entries[0]?.revision, 16, 'the stored revision is the last answered one')
})
