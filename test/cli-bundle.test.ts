import t from 'tap'
import { spawn } from 'node:child_process'
import { readFile, readdir, realpath, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { BIN, loginAt } from './helpers/spawn-server.js'
import { makeSite, TEST_PASSWORD, TEST_SECRET } from './helpers/site.js'

/* The executable runs the server bundled by scripts/build-server.mjs (dist/server/), the other
   tests mostly the TypeScript sources in process: this one checks what only the bundle can get
   wrong. Worker threads whose file is missing fall back to the service's own thread silently,
   so the workers' exit codes are recorded by a preloaded module (`--import`) in the main thread
   (a worker started through startWorker's prelude does not load --import modules itself), together
   with the Node modules loaded by the time of a SIGUSR2. */
const HOOK = `import { appendFileSync, writeFileSync } from 'node:fs'
import { isMainThread } from 'node:worker_threads'
const out = process.env.GIT_CMS_TEST_RECORD
if (isMainThread) {
  process.on('SIGUSR2', () => { writeFileSync(out + '.modules', JSON.stringify(process.moduleLoadList)) })
  process.on('worker', (worker) => { worker.once('exit', (code) => { appendFileSync(out + '.workers', 'exit ' + code + '\\n') }) })
}
`

const ENTRIES = 250
const API = '/api/cms'

const files: Record<string, string> = {
  'cms.config.yaml': `collections:
  notes:
    format: md
    titleField: title
    schema:
      type: object
      required: [title]
      properties:
        title: { type: string }
        date: { type: string, format: date }
        slug: { type: string, pattern: '^[a-z0-9-]+$' }
        body: { type: string }
`
}
for (let i = 0; i < ENTRIES; i++) files[`content/notes/n${i}.md`] = `---\ntitle: Note ${i}${i % 10 === 0 ? ' lantern' : ''}\ndate: 2026-01-0${1 + (i % 9)}\n---\n\nBody ${i}.\n`

t.test('the bundled executable: workers run from their own files, formats and patterns are checked, a JSON answer loads no fetch, assets are found', async t => {
  const repo = await makeSite(t, files)
  const record = path.join(await realpath(os.tmpdir()), `git-cms-bundle-${process.pid}-${Date.now()}`)
  t.teardown(async () => { for (const ext of ['.modules', '.workers']) await rm(record + ext, { force: true }) })
  const child = spawn(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(HOOK)}`, BIN, 'serve', '--repo', repo, '--port', '0'], {
    env: { ...process.env, CMS_EDIT_PASSWORD: TEST_PASSWORD, CMS_SESSION_SECRET: TEST_SECRET, CMS_LOG_LEVEL: 'warn', GIT_CMS_TEST_RECORD: record },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let err = ''
  child.stderr.on('data', (c: Buffer) => { err += c.toString() })
  const exited = new Promise<number | null>(resolve => child.once('exit', code => { resolve(code) }))
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => { reject(new Error(`no listening line; stderr: ${err}`)) }, 30000)
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /git-cms listening on (http:\/\/\S+)/.exec(out)
      if (m !== null) { clearTimeout(timer); resolve(m[1]!) }
    })
    child.once('exit', code => { clearTimeout(timer); reject(new Error(`exited ${String(code)}: ${err}`)) })
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
  t.equal(refused.status, 400, 'a date that does not exist is refused (ajv-formats, bundled)')
  t.match(await refused.json(), { code: 'schema_validation', issues: [{ path: 'date', code: 'format' }] })
  t.equal((await save('2026-02-28')).status, 200, 'a real date is saved')
  const unslug = await save('Not A Slug', 'slug')
  t.equal(unslug.status, 400, 'a value its pattern refuses is refused (re2js, bundled)')
  t.match(await unslug.json(), { code: 'schema_validation', issues: [{ path: 'slug', code: 'pattern' }] })
  t.equal((await save('a-slug', 'slug')).status, 200, 'a value its pattern takes is saved')

  child.kill('SIGUSR2')
  let modules: string[] = []
  for (let i = 0; i < 100 && modules.length === 0; i++) {
    modules = await readFile(`${record}.modules`, 'utf8').then(text => JSON.parse(text) as string[], () => [])
    if (modules.length === 0) await new Promise(resolve => setTimeout(resolve, 50))
  }
  t.ok(modules.length > 0, 'the module list was recorded')
  t.same(modules.filter(m => m.includes('undici')), [], 'JSON answers did not load Node\'s fetch (undici)')

  // Browser bundles are found from dist/server/ too.
  t.equal((await fetch(`${url}/admin/assets/studio.js`)).status, 200, 'the Studio bundle is served')
  t.equal((await fetch(`${url}/__cms/bootstrap.js`)).status, 200, 'the inline editor bootstrap is served')

  child.kill('SIGTERM')
  t.equal(await exited, 0, 'exits 0 after SIGTERM')
  const workers = (await readFile(`${record}.workers`, 'utf8')).trim().split('\n')
  // The full-text index of 250 entries is built by a child process running the bundle's search
  // worker file (lib/search/segment-reader.ts): it found its word above, and a child that failed
  // would have fallen back to a search worker thread, a second exit here.
  t.equal(workers.length, 1, `the index worker ran, and no search worker thread (${workers.length} exits)`)
  t.same(workers.filter(line => line !== 'exit 0'), [], 'every worker ended well (a missing worker file exits 1)')
})

t.test('the bundle has a module for every worker lib/ starts', async t => {
  const root = fileURLToPath(new URL('..', import.meta.url))
  const built = new Set(await readdir(path.join(root, 'dist', 'server')))
  const starters = await sourcesStartingWorkers(path.join(root, 'lib'))
  t.ok(starters.length >= 2, 'lib/ starts workers (the index reader and the search segment reader)')
  for (const { file, name } of starters) t.ok(built.has(`${name}.js`), `${path.relative(root, file)} starts ./${name}: dist/server/${name}.js exists`)
})

async function sourcesStartingWorkers (dir: string): Promise<Array<{ file: string, name: string }>> {
  const found: Array<{ file: string, name: string }> = []
  for (const d of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, d.name)
    if (d.isDirectory()) { if (d.name !== 'browser') found.push(...await sourcesStartingWorkers(full)); continue }
    if (!d.name.endsWith('.ts')) continue
    const text = await readFile(full, 'utf8')
    if (!text.includes('new Worker(') && !text.includes('startWorker(')) continue
    for (const m of text.matchAll(/new URL\(`\.\/([\w-]+)\$\{/g)) found.push({ file: full, name: m[1]! })
  }
  return found
}
