import t from 'tap'
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { startServer, writeHeaders } from '../helpers/site.js'
import { holdsDuring } from '../helpers/main-thread-cpu.js'

const API = '/api/cms'
/** About 1 MB of YAML: the `yaml` package took ~1 s to read it and more to edit it, all on the event loop. */
const ITEMS = 40_000
/** Far above the contract's 100 ms, far below the old holds: CPU of one turn, which load inflates much less than wall-clock. */
const BOUND_MS = 300

const tags = (prefix: string): string => Array.from({ length: ITEMS }, (_, i) => `  - ${prefix} tag number ${i}\n`).join('')
const config = { collections: { posts: { format: 'md' as const }, data: { format: 'yaml' as const } } }
const files: Record<string, string> = {
  'content/posts/long.md': `---\n# kept as written\ntitle: Long\ntags:\n${tags('a')}---\nBody\n`,
  'content/data/long.yaml': `# kept as written\ntitle: Long\ntags:\n${tags('a')}`
}

t.setTimeout(300_000)

t.test('entries of a megabyte of YAML are read, saved and written without holding the event loop', async t => {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  const post = async (body: unknown): Promise<Response> => await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify(body) })
  for (const [collection, file] of [['posts', 'long.md'], ['data', 'long.yaml']] as const) {
    const full = path.join(s.repoDir, 'content', collection, file)
    const holds = await holdsDuring(async () => {
      // An outside edit: the file is read again when asked for.
      await writeFile(full, (await readFile(full, 'utf8')).replace('title: Long', 'title: Edited outside'))
      let entry: { data?: { title?: string, tags?: string[] } } = {}
      for (let tries = 0; entry.data?.title !== 'Edited outside' && tries < 500; tries++) {
        const res = await s.request(`${API}/entries?collection=${collection}&id=long`, { headers: { cookie } })
        t.equal(res.status, 200)
        entry = ((await res.json()) as { entries: Array<typeof entry> }).entries[0] ?? {}
      }
      t.equal(entry.data?.title, 'Edited outside', `${collection}: the outside edit is read`)
      t.equal(entry.data?.tags?.length, ITEMS, `${collection}: every item read`)
      const saved = await post({ type: 'save_field', collection, id: 'long', field: 'title', value: 'Saved' })
      t.equal(saved.status, 200, `${collection}: save_field ${await saved.text()}`)
      const tagsB = Array.from({ length: ITEMS }, (_, i) => i % 1000 === 0 ? `b tag number ${i}` : `a tag number ${i}`)
      const put = await post({ type: 'put_entry', collection, id: 'long', data: { title: 'Put', tags: tagsB, ...(collection === 'posts' ? { body: 'Body\n' } : {}) } })
      t.equal(put.status, 200, `${collection}: put_entry ${await put.text()}`)
      const created = await post({ type: 'put_entry', collection, id: 'new', data: { title: 'New', tags: tagsB, ...(collection === 'posts' ? { body: 'Body\n' } : {}) } })
      t.equal(created.status, 200, `${collection}: a new entry ${await created.text()}`)
    })
    const text = await readFile(full, 'utf8')
    t.ok(text.startsWith(collection === 'posts' ? '---\n# kept as written\ntitle: Put\n' : '# kept as written\ntitle: Put\n'), `${collection}: the comment kept, the title changed`)
    t.ok(text.includes('  - b tag number 39000\n') && text.includes('  - a tag number 39001\n'), `${collection}: the changed items written, the others kept`)
    const created = await readFile(path.join(s.repoDir, 'content', collection, file.replace('long', 'new')), 'utf8')
    t.ok(created.includes('title: New') && created.includes('b tag number 39000'), `${collection}: the new entry written`)
    if (holds.cpuMs !== null) t.ok(holds.cpuMs < BOUND_MS, `${collection}: ${holds.cpuMs} ms of CPU in one turn at most`)
  }
})

t.test('an unreadable large text is unreadable, not an error of the service', async t => {
  const s = await startServer(t, { config, files: { 'content/data/bad.yaml': `title: Bad\ntags:\n${tags('a')}  - [unclosed\n` } })
  const cookie = await s.login()
  const list = await s.request(`${API}/entries?collection=data`, { headers: { cookie } })
  t.equal(list.status, 200)
  const entry = ((await list.json()) as { entries: Array<{ id: string, readError?: { message: string } }> }).entries.find(e => e.id === 'bad')
  t.match(entry?.readError?.message, /\S/, 'listed with the reason it cannot be read')
  t.equal((await s.request(`${API}/entries?collection=data&id=bad`, { headers: { cookie } })).status, 422, 'its read is a 422')
  const saved = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'save_field', collection: 'data', id: 'bad', field: 'title', value: 'x' }) })
  t.equal(saved.status, 422, 'a field save of an unreadable entry is refused')
  t.match(await readFile(path.join(s.repoDir, 'content/data/bad.yaml'), 'utf8'), /^title: Bad\n/, 'and the file is unchanged')
})

t.test('a frontmatter is measured to its real end, not to the first line that looks like one', async t => {
  const s = await startServer(t, { config, files: {} })
  const cookie = await s.login()
  // A flow mapping's closing brace at a line start: a shortcut check took it for the end of the frontmatter.
  const text = `---\ntitle: Brace\nmap: {\n  a: 1\n}\ntags:\n${tags('a')}---\nBody\n`
  let tagCount = 0
  const holds = await holdsDuring(async () => {
    await writeFile(path.join(s.repoDir, 'content/posts/brace.md'), text)
    for (const started = Date.now(); tagCount === 0 && Date.now() - started < 60_000; await new Promise(resolve => setTimeout(resolve, 20))) {
      const res = await s.request(`${API}/entries?collection=posts&id=brace`, { headers: { cookie } })
      if (res.status === 200) tagCount = ((await res.json()) as { entries: Array<{ data: { tags?: string[] } }> }).entries[0]?.data.tags?.length ?? 0
    }
  })
  t.equal(tagCount, ITEMS, 'read whole')
  if (holds.cpuMs !== null) t.ok(holds.cpuMs < BOUND_MS, `${holds.cpuMs} ms of CPU in one turn at most`)
})
