import t, { type Test } from 'tap'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import os from 'node:os'
import path from 'node:path'
import { crc32 } from 'node:zlib'
import { loginAt, spawnServer } from './helpers/spawn-server.js'
import { makeSite } from './helpers/site.js'

/* bin/git-cms compiles the server bundle with a V8 code cache (GIT_CMS_CODE_CACHE: its folder, or
   `off`). A cache that is missing, cut, corrupt, made for another bundle or refused by V8 is
   ignored: the server compiles the bundle as without one, serves correctly, and writes a good one
   once its start is behind it (1 s; only `serve` and `demo` write one). A good one is used as it is (not written again). */

const API = '/api/cms'
const MAGIC = Buffer.from('git-cms v8 code cache 1\n')
const HEADER = MAGIC.length + 32 + 4
/** Longer than the executable waits before it writes its cache. */
const WRITE_WAIT_MS = 2500

const files: Record<string, string | null> = {
  'cms.config.yaml': `collections:
  notes:
    format: md
    titleField: title
    schema:
      type: object
      required: [title]
      properties:
        title: { type: string }
        body: { type: string }
`
}
for (let i = 0; i < 30; i++) files[`content/notes/n${i}.md`] = `---\ntitle: Note ${i}${i % 10 === 0 ? ' lantern' : ''}\n---\n\nBody ${i}.\n`

const sleep = async (ms: number): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }

/** The same site with its config as an ES module (loaded with import() from the executable, not from the bundle's script). */
const mjsFiles: Record<string, string | null> = { ...files, 'cms.config.yaml': null }
mjsFiles['cms.config.mjs'] = `export default { collections: { notes: { format: 'md', titleField: 'title', schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, body: { type: 'string' } } } } } }\n`

/** Starts the server with a cache folder, checks it serves, keeps it running `ms`, stops it. */
async function serveOnce (t: Test, repo: string, cacheDir: string, ms: number): Promise<void> {
  // Without the test runner's V8 coverage (under it the executable neither makes nor takes a cache).
  const server = await spawnServer(t, repo, { GIT_CMS_CODE_CACHE: cacheDir, NODE_V8_COVERAGE: '' })
  const cookie = await loginAt(server.url)
  const headers = { cookie }
  const list = await (await fetch(`${server.url}${API}/entries?collection=notes&pageSize=5`, { headers })).json() as { pagination: { total: number } }
  t.equal(list.pagination.total, 30, 'the list holds every entry')
  const one = await (await fetch(`${server.url}${API}/entries?collection=notes&id=n7`, { headers })).json() as { entries: Array<{ data: { title: string } }> }
  t.equal(one.entries[0]?.data.title, 'Note 7', 'an entry reads back')
  const found = await (await fetch(`${server.url}${API}/entries?collection=notes&q=lantern`, { headers })).json() as { pagination: { total: number } }
  t.equal(found.pagination.total, 3, 'the full-text index finds its word')
  await sleep(ms)
  t.equal(await server.kill('SIGTERM'), 0, 'exits 0')
  t.notMatch(server.stderr(), /error|warning/i, 'no error or warning on stderr')
}

/** The cache file's payload when whole and checked by its CRC, else null. */
async function goodCache (file: string): Promise<Buffer | null> {
  const data = await readFile(file).catch(() => null)
  if (data === null || data.length <= HEADER || !data.subarray(0, MAGIC.length).equals(MAGIC)) return null
  const payload = data.subarray(HEADER)
  return data.readUInt32BE(MAGIC.length + 32) === crc32(payload) ? payload : null
}

t.test('the code cache: written once the start is behind, then used as it is; a cut, corrupt, foreign or refused one is ignored and replaced; none when off or when its folder cannot be made', async t => {
  // A first run writes the cache the other cases start from; then every case runs side by side,
  // each over its own site and cache folder.
  const repo = await makeSite(t, files)
  const seedDir = await tempDir(t, 'seed')
  const seedFile = path.join(seedDir, 'server.cjs.v8-cache')
  await serveOnce(t, repo, seedDir, WRITE_WAIT_MS)
  const good = await readFile(seedFile)
  t.ok(await goodCache(seedFile), `a cache was written, whole (${good.length} bytes)`)
  t.ok(good.length > HEADER + 100_000, 'it holds the compiled code')
  const withCrc = (data: Buffer): Buffer => { const copy = Buffer.from(data); copy.writeUInt32BE(crc32(copy.subarray(HEADER)), MAGIC.length + 32); return copy }
  const bad: Record<string, Buffer> = {
    // Cut in the middle of V8's data.
    cut: good.subarray(0, Math.floor(good.length / 2)),
    // Bytes changed in V8's data: V8 checks no checksum of its own (release builds), the CRC catches it.
    corrupt: (() => { const copy = Buffer.from(good); for (let i = HEADER + 5000; i < HEADER + 5100; i++) copy[i] = copy[i]! ^ 0x5a; return copy })(),
    // Another bundle's (or Node version's) key.
    foreign: withCrc((() => { const copy = Buffer.from(good); copy[MAGIC.length] = copy[MAGIC.length]! ^ 1; return copy })()),
    // Whole and carrying the key, but not V8's data: V8 refuses it.
    refused: withCrc(Buffer.concat([good.subarray(0, HEADER), randomBytes(good.length - HEADER)])),
    // Not a cache at all.
    garbage: Buffer.from('not a cache\n')
  }
  const cases = Object.entries(bad).map(async ([name, data]) => {
    const dir = await tempDir(t, name)
    const file = path.join(dir, 'server.cjs.v8-cache')
    await writeFile(file, data)
    await serveOnce(t, await makeSite(t, files), dir, WRITE_WAIT_MS)
    const payload = await goodCache(file)
    t.ok(payload, `${name}: a good cache was written in its place`)
    t.notOk(payload?.equals(data.subarray(HEADER)), `${name}: not the one it found`)
  })
  const reused = (async () => {
    const before = await stat(seedFile)
    await serveOnce(t, repo, seedDir, WRITE_WAIT_MS)
    const after = await stat(seedFile)
    t.equal(after.ino, before.ino, 'a good cache is taken by V8 and not written again')
    t.equal(after.mtimeMs, before.mtimeMs)
  })()
  const off = (async () => {
    const server = await spawnServer(t, await makeSite(t, files), { GIT_CMS_CODE_CACHE: 'off', NODE_V8_COVERAGE: '' })
    await loginAt(server.url)
    await sleep(WRITE_WAIT_MS)
    t.equal(await server.kill('SIGTERM'), 0, 'off: serves, exits 0')
  })()
  const blocked = (async () => {
    // A file where the folder should be.
    const file = path.join(await tempDir(t, 'blocked'), 'a-file')
    await writeFile(file, '')
    await serveOnce(t, await makeSite(t, files), file, WRITE_WAIT_MS)
    t.equal((await stat(file)).size, 0, 'blocked: the file in the way is left alone')
  })()
  // A cms.config.mjs (import() at run time), with a good cache.
  const mjs = (async () => {
    const dir = await tempDir(t, 'mjs')
    await writeFile(path.join(dir, 'server.cjs.v8-cache'), good)
    await serveOnce(t, await makeSite(t, mjsFiles), dir, 0)
  })()
  await Promise.all([...cases, reused, off, blocked, mjs])
})

async function tempDir (t: Test, name: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `git-cms-code-cache-${name}-`))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  return dir
}
