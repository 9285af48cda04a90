import t from 'tap'
import { spawn } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, readFile, realpath, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { BIN, loginAt, spawnServer } from './helpers/spawn-server.js'
import { makeSite, TEST_PASSWORD, TEST_SECRET } from './helpers/site.js'

/* bin/git-cms runs the library's build (dist/lib/cli.js); most other tests run the TypeScript
   sources in process. This one checks what only the executable can get wrong: the build's workers,
   browser bundles and packages are found from dist/, a cms.config.mjs loads, and all of it works
   under an --import loader hook, as coverage tools and APM agents start it. The hook records the exit
   code of every worker thread (a worker whose file is missing exits 1). */
const HOOK = `import { appendFileSync } from 'node:fs'
import { isMainThread } from 'node:worker_threads'
const out = process.env.GIT_CMS_TEST_RECORD
if (isMainThread) process.on('worker', (worker) => { worker.once('exit', (code) => { appendFileSync(out, 'exit ' + code + '\\n') }) })
`

const ENTRIES = 250
const API = '/api/cms'

const notesSchema = `    schema:
      type: object
      required: [title]
      properties:
        title: { type: string }
        date: { type: string, format: date }
        slug: { type: string, pattern: '^[a-z0-9-]+$' }
        body: { type: string }
`
const files: Record<string, string> = { 'cms.config.yaml': `collections:\n  notes:\n    format: md\n    titleField: title\n${notesSchema}` }
for (let i = 0; i < ENTRIES; i++) files[`content/notes/n${i}.md`] = `---\ntitle: Note ${i}${i % 10 === 0 ? ' lantern' : ''}\ndate: 2026-01-0${1 + (i % 9)}\n---\n\nBody ${i}.\n`

t.test('the executable under a loader hook: workers run from their files, formats and patterns are checked, assets are found, SIGTERM exits 0', async t => {
  const repo = await makeSite(t, files)
  const record = path.join(await realpath(os.tmpdir()), `git-cms-executable-${process.pid}-${Date.now()}.workers`)
  t.teardown(async () => { await rm(record, { force: true }) })
  const child = spawn(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(HOOK)}`, BIN, 'serve', '--repo', repo, '--port', '0'], {
    env: { ...process.env, CMS_EDIT_PASSWORD: TEST_PASSWORD, CMS_SESSION_SECRET: TEST_SECRET, CMS_LOG_LEVEL: 'warn', GIT_CMS_TEST_RECORD: record },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let err = ''
  child.stderr.on('data', (c: Buffer) => { err += c.toString() })
  const exited = new Promise<number | null>(resolve => child.once('exit', code => { resolve(code) }))
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  // No timer of its own: tap's timeout catches a start that hangs.
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /git-cms listening on (http:\/\/\S+)/.exec(out)
      if (m !== null) resolve(m[1]!)
    })
    child.once('exit', code => { reject(new Error(`exited ${String(code)}: ${err}`)) })
  })
  const cookie = await loginAt(url)
  const headers = { cookie }
  const list = await (await fetch(`${url}${API}/entries?collection=notes&pageSize=5`, { headers })).json() as { pagination: { total: number } }
  t.equal(list.pagination.total, ENTRIES, 'the index holds every entry')
  const found = await (await fetch(`${url}${API}/entries?collection=notes&q=lantern`, { headers })).json() as { pagination: { total: number } }
  t.equal(found.pagination.total, ENTRIES / 10, 'the full-text index finds its word')

  const save = async (value: string, field = 'date'): Promise<Response> => {
    const entry = (await (await fetch(`${url}${API}/entries?collection=notes&id=n1`, { headers })).json() as { entries: Array<{ revision: number }> }).entries[0]!
    return await fetch(`${url}${API}/mutate`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json', 'x-cms-request': '1' },
      body: JSON.stringify({ type: 'save_field', collection: 'notes', id: 'n1', field, value, expectedRevision: entry.revision })
    })
  }
  const refused = await save('2026-02-30')
  t.equal(refused.status, 400, 'a date that does not exist is refused (ajv-formats)')
  t.match(await refused.json(), { code: 'schema_validation', issues: [{ path: 'date', code: 'format' }] })
  t.equal((await save('2026-02-28')).status, 200, 'a real date is saved')
  const unslug = await save('Not A Slug', 'slug')
  t.equal(unslug.status, 400, 'a value its pattern refuses is refused (re2js)')
  t.match(await unslug.json(), { code: 'schema_validation', issues: [{ path: 'slug', code: 'pattern' }] })
  t.equal((await save('a-slug', 'slug')).status, 200, 'a value its pattern takes is saved')

  t.equal((await fetch(`${url}/admin/assets/studio.js`)).status, 200, 'the Studio bundle is served')
  t.equal((await fetch(`${url}/__cms/bootstrap.js`)).status, 200, 'the inline editor bootstrap is served')

  child.kill('SIGTERM')
  t.equal(await exited, 0, 'exits 0 after SIGTERM')
  const workers = (await readFile(record, 'utf8').catch(() => '')).split('\n').filter(line => line !== '')
  t.same(workers.filter(line => line !== 'exit 0'), [], `every worker thread ended well (${workers.length} ran)`)
})

t.test('a cms.config.mjs is imported by the executable', async t => {
  const mjs: Record<string, string | null> = { ...files, 'cms.config.yaml': null }
  mjs['cms.config.mjs'] = `export default { collections: { notes: { format: 'md', titleField: 'title', schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, date: { type: 'string' }, slug: { type: 'string' }, body: { type: 'string' } } } } } }\n`
  const server = await spawnServer(t, await makeSite(t, mjs))
  const headers = { cookie: await loginAt(server.url) }
  const list = await (await fetch(`${server.url}${API}/entries?collection=notes&pageSize=5`, { headers })).json() as { pagination: { total: number } }
  t.equal(list.pagination.total, ENTRIES, 'the list holds every entry')
  const one = await (await fetch(`${server.url}${API}/entries?collection=notes&id=n7`, { headers })).json() as { entries: Array<{ data: { title: string } }> }
  t.equal(one.entries[0]?.data.title, 'Note 7', 'an entry reads back')
  t.equal(await server.kill('SIGTERM'), 0, 'exits 0')
  t.notMatch(server.stderr(), /error|warning/i, 'no error or warning on stderr')
})

t.test('without a build, the executable says so in one line and exits 1', async t => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'git-cms-unbuilt-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  await mkdir(path.join(dir, 'bin'))
  await copyFile(BIN, path.join(dir, 'bin', 'git-cms'))
  await copyFile(path.join(path.dirname(BIN), 'package.json'), path.join(dir, 'bin', 'package.json'))
  const child = spawn(process.execPath, [path.join(dir, 'bin', 'git-cms'), '--help'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString() })
  const code = await new Promise<number | null>(resolve => child.once('close', resolve))
  t.equal(code, 1)
  t.match(stderr, /^git-cms: .*dist\/lib\/cli\.js.* \(run npm run build\)\n$/)
})
