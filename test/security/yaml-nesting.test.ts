import t from 'tap'
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { makeSite, writeHeaders } from '../helpers/site.js'
import { spawnServer, loginAt } from '../helpers/spawn-server.js'
import { fromRoot } from '../helpers/repo-root.js'

const API = '/api/cms'
const nested = (depth: number): string => `title: Deep\nitems: ${'['.repeat(depth)}${']'.repeat(depth)}\n`
/** 2,000 levels fit in 4 KB and are parsed on the event loop; the other two in the entry-text thread. */
const DEPTHS: Record<string, number> = { 'deep-a': 2000, 'deep-b': 3000, 'deep-c': 20_000 }

t.setTimeout(300_000)

t.test('a text nested thousands deep is refused before the parser recurses: the process never aborts', async t => {
  // In a fresh process, on the main thread: this order of reads made V8 abort ("RegExpCompiler Allocation failed").
  const formats = pathToFileURL(fromRoot('dist/lib/content/formats.js')).href
  const script = `const { parseEntry } = await import(${JSON.stringify(formats)})
for (const depth of [3000, 20000, 2000, 2000, 2000, 2000]) {
  try { parseEntry('yaml', 'a: ' + '['.repeat(depth) + ']'.repeat(depth)); console.log('read') } catch (err) { console.log(err.message) }
}`
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script])
  t.same(stdout.trim().split('\n'), Array(6).fill('The YAML is nested deeper than 512 levels'))
})

// Through the real service: each deep entry is unreadable with its reason, every read and save of it
// is refused, and the process serves on.
t.test('YAML nested thousands deep is an unreadable entry, read as often as asked, and the service stays up', async t => {
  const files: Record<string, string> = {
    'cms.config.yaml': 'collections:\n  data:\n    format: yaml\n',
    'content/data/fine.yaml': 'title: Fine\n'
  }
  for (const [id, depth] of Object.entries(DEPTHS)) files[`content/data/${id}.yaml`] = nested(depth)
  const repo = await makeSite(t, files, { fixtures: false })
  const server = await spawnServer(t, repo)
  const cookie = await loginAt(server.url)
  const get = async (url: string): Promise<Response> => await fetch(server.url + url, { headers: { cookie } })
  for (let round = 0; round < 6; round++) {
    for (const [id, depth] of Object.entries(DEPTHS)) {
      // An outside edit each round, so each read parses the text again.
      await writeFile(path.join(repo, 'content/data', `${id}.yaml`), `${nested(depth)}# round ${round}\n`)
      const read = await get(`${API}/entries?collection=data&id=${id}`)
      t.equal(read.status, 422, `round ${round}: ${id} is unreadable`)
      const save = await fetch(`${server.url}${API}/mutate`, { method: 'POST', headers: writeHeaders(cookie), body: JSON.stringify({ type: 'save_field', collection: 'data', id, field: 'title', value: 'x' }) })
      t.equal(save.status, 422, `round ${round}: a save of ${id} is refused`)
    }
  }
  const list = await get(`${API}/entries?collection=data`)
  t.equal(list.status, 200)
  const entries = ((await list.json()) as { entries: Array<{ id: string, readError?: { message: string } }> }).entries
  t.same(entries.filter(e => e.readError !== undefined).map(e => e.id).sort(), Object.keys(DEPTHS), 'the deep ones listed with their reason')
  t.match(entries.find(e => e.id === 'deep-a')?.readError?.message, /nested/, 'the reason says why')
  t.equal((await get('/healthz')).status, 200, 'the service is up')
  t.equal(server.child.exitCode, null, 'and its process never exited')
})
