import t from 'tap'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { startServer, writeHeaders } from '../helpers/site.js'

const API = '/api/cms'
/** Each change placed reparsed the whole text: 1,000 changed items took 17 s, these 4,000 minutes. */
const ITEMS = 4000
const items = (prefix: string): string[] => Array.from({ length: ITEMS }, (_, i) => `${prefix}${i}`)

const config = { collections: { posts: { format: 'md' as const }, social: { format: 'toml' as const }, site: { format: 'json' as const } } }
const files: Record<string, string> = {
  'content/posts/long.md': `---\n# kept as written\ntitle:  Long   # a comment\ntags:\n${items('a').map(i => `  - ${i}\n`).join('')}---\nBody\n`,
  'content/social/long.toml': `# kept as written\ntitle =  "Long"\ntags = [${items('a').map(i => `"${i}"`).join(', ')}]\n`,
  'content/site/long.json': `{\n    "title":   "Long",\n    "tags": [\n${items('a').map(i => `        "${i}"`).join(',\n')}\n    ]\n}\n`
}

// The old cost was minutes per save: the time limit is what fails it.
t.setTimeout(120_000)

t.test('a save changing thousands of list items answers with the edit and keeps the rest of the text as written', async t => {
  const s = await startServer(t, { config, files })
  const cookie = await s.login()
  const cases = [
    { collection: 'posts', file: 'long.md', data: { title: 'Long', tags: items('b'), body: 'Body\n' }, kept: ['# kept as written\ntitle:  Long   # a comment\n'] },
    { collection: 'social', file: 'long.toml', data: { title: 'Long', tags: items('b') }, kept: ['# kept as written\ntitle =  "Long"\n'] },
    { collection: 'site', file: 'long.json', data: { title: 'Long', tags: items('b') }, kept: ['    "title":   "Long",\n'] }
  ]
  for (const { collection, file, data, kept } of cases) {
    const res = await s.request(`${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'put_entry', collection, id: 'long', data }) })
    t.equal(res.status, 200, `${collection}: ${await res.text()}`)
    const text = await readFile(path.join(s.repoDir, 'content', collection, file), 'utf8')
    for (const part of kept) t.ok(text.includes(part), `${collection}: the unchanged lines stay as written`)
    t.ok(text.includes('b3999') && !text.includes('a3999'), `${collection}: every item is the new one`)
  }
})
