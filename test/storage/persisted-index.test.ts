import t from 'tap'
import { readFile, readdir, realpath, rm, stat, utimes, writeFile, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { listEntries, readEntry, type EntryView } from '../helpers/entry-api.js'
import { makeSite, startServer, writeHeaders, type TestServer } from '../helpers/site.js'
import { spawnServer, loginAt } from '../helpers/spawn-server.js'
import { RACY_MS, SNAPSHOT_FORMAT } from '../../lib/storage/index-snapshot.js'
import { RowTable } from '../../lib/storage/row-table.js'
import { readInWorker } from '../../lib/storage/index-reader.js'

type View = EntryView
interface ListBody { entries: View[], pagination: { total: number } }

const config = (required: string): string => `collections:
  posts:
    format: md
    titleField: title
    schema:
      type: object
      required: [${required}]
      properties:
        title: { type: string }
        author: { type: string }
        body: { type: string }
  docs:
    format: md
    nested: true
    titleField: title
`

const post = (title: string, body = 'Some body text.'): string => `---\ntitle: ${title}\n---\n\n${body}\n`

const FILES: Record<string, string> = {
  'cms.config.yaml': config('title'),
  'content/posts/alpha.md': post('Alpha aaaa'),
  'content/posts/bravo.md': post('Bravo'),
  'content/posts/charlie.md': post('Charlie'),
  'content/posts/delta.md': post('Delta'),
  'content/docs/guide/intro.md': post('Intro'),
  'content/docs/guide/deep/setup.md': post('Setup', 'Run it.')
}

interface Teardown { teardown: (fn: () => unknown) => void }

/**
 * Waits until files written so far are no longer "racy" (changed within RACY_MS of a read), so the
 * index persists their rows.
 */
async function settle (): Promise<void> {
  await new Promise(resolve => setTimeout(resolve, RACY_MS + 50))
}

async function site (t: Teardown): Promise<string> {
  const dir = await makeSite(t, FILES, { fixtures: false })
  await settle()
  return dir
}

const list = listEntries
const read = readEntry

/** Starts, lets every index build and persist, and stops. */
async function startAndStop (t: Teardown, repoDir: string): Promise<Map<string, View>> {
  const s = await startServer(t, { repoDir })
  await s.cms.ready
  const seen = new Map<string, View>()
  for (const collection of ['posts', 'docs']) for (const v of await list(s, collection)) seen.set(`${collection}/${v.id}`, v)
  await s.close()
  return seen
}

async function loadStats (s: TestServer, collection: string): Promise<{ fromSnapshot: number, read: number }> {
  return (await s.services.content.index(collection)).loadStats
}

const snapshotFile = (repoDir: string, collection: string): string => path.join(repoDir, '.git', 'cms', 'index', `${collection}.rows`)

t.test('changes made while the service is down are all seen after a restart', async t => {
  const repoDir = await site(t)
  // A whole second: the mtime set back below is exactly the one it had.
  await utimes(path.join(repoDir, 'content/posts/alpha.md'), 1_700_000_000, 1_700_000_000)
  await settle()
  const before = await startAndStop(t, repoDir)
  t.ok((await stat(snapshotFile(repoDir, 'posts'))).size > 0, 'the index is persisted under .git/cms/index/')
  t.ok((await stat(snapshotFile(repoDir, 'docs'))).size > 0)

  // The same size and the same mtime: only the ctime (and the content) tell the change.
  const alpha = path.join(repoDir, 'content/posts/alpha.md')
  const st = await stat(alpha)
  const changed = (await readFile(alpha, 'utf8')).replace('Alpha aaaa', 'Alpha zzzz')
  await writeFile(alpha, changed)
  await utimes(alpha, st.atime, st.mtime)
  const after = await stat(alpha)
  t.equal(after.size, st.size, 'same size')
  t.equal(after.mtimeMs, st.mtimeMs, 'same mtime')
  await writeFile(path.join(repoDir, 'content/posts/echo.md'), post('Echo'))
  await rm(path.join(repoDir, 'content/posts/bravo.md'))
  await writeFile(path.join(repoDir, 'content/docs/guide/deep/setup.md'), post('Setup', 'Run it twice.'))
  await settle()

  const s = await startServer(t, { repoDir })
  const posts = await list(s, 'posts')
  t.same(posts.map(v => v.id), ['alpha', 'charlie', 'delta', 'echo'], 'an added file is listed, a deleted one is not')
  t.equal(posts.find(v => v.id === 'alpha')?.data?.title, 'Alpha zzzz', 'an edit with the same size and mtime is seen in the list')
  const a = await read(s, 'posts', 'alpha')
  t.equal(a?.data?.title, 'Alpha zzzz', 'and in a read')
  t.equal(a?.revision, (before.get('posts/alpha')?.revision ?? 0) + 1, 'its revision moved')
  t.equal(await read(s, 'posts', 'bravo'), null, 'a deleted file is gone')
  t.equal((await read(s, 'posts', 'echo'))?.data?.title, 'Echo')
  t.equal((await read(s, 'posts', 'charlie'))?.revision, before.get('posts/charlie')?.revision, 'an unchanged entry keeps its revision')
  const setup = await read(s, 'docs', 'guide/deep/setup')
  t.equal(setup?.data?.body, '\nRun it twice.\n', 'a change in a subfolder of a nested collection is seen')
  t.equal(setup?.revision, (before.get('docs/guide/deep/setup')?.revision ?? 0) + 1)
  t.same(await loadStats(s, 'posts'), { fromSnapshot: 2, read: 2 }, 'only the changed and added files were read')
  t.same(await loadStats(s, 'docs'), { fromSnapshot: 1, read: 1 })
  await s.close()

  // The next start, with nothing changed, reads no file at all.
  const again = await startServer(t, { repoDir })
  t.same((await list(again, 'posts')).map(v => v.id), ['alpha', 'charlie', 'delta', 'echo'])
  t.same(await loadStats(again, 'posts'), { fromSnapshot: 4, read: 0 })
  await again.close()
})

/** The key a snapshot file carries (bytes 16 to 80: after the magic, the format and the key's length). */
const keyOf = (bytes: Buffer): string => bytes.toString('latin1', 16, 16 + bytes.readUInt32LE(12))

t.test('a corrupt, truncated or old-format snapshot falls back to a full build', async t => {
  const repoDir = await site(t)
  await startAndStop(t, repoDir)
  const file = snapshotFile(repoDir, 'posts')
  const bytes = await readFile(file)
  const key = keyOf(bytes)
  t.ok(RowTable.parse(bytes, SNAPSHOT_FORMAT, key, 'title') !== null, 'the written snapshot parses')
  const flipped = Buffer.from(bytes)
  // A byte of the last row's payload (its JSON stays well-formed: only the checksum tells).
  const at = flipped.lastIndexOf('Delta')
  flipped[at] = 'X'.charCodeAt(0)
  const recount = Buffer.from(bytes)
  recount.writeUInt32LE(3, recount.length - 8)
  const oldFormat = Buffer.from(bytes)
  oldFormat.writeUInt32LE(SNAPSHOT_FORMAT - 1, 8)
  const oldJsonLines = `{"format":5,"key":"${key}"}\n{"end":0}\n`
  const variants: Array<[string, Buffer | string]> = [
    ['truncated', bytes.subarray(0, Math.floor(bytes.length / 2))],
    ['cut before its checksum', bytes.subarray(0, bytes.length - 4)],
    ['garbage', '\u0000\u0001garbage'],
    ['a changed byte', flipped],
    ['another row count', recount],
    ['an older format number', oldFormat],
    ['the JSON lines of the format before', oldJsonLines],
    ['empty', ''],
    ['with bytes after its end', Buffer.concat([bytes, Buffer.from('zulu')])]
  ]
  for (const [name, broken] of variants) {
    await writeFile(file, broken)
    await writeFile(path.join(repoDir, 'content/posts/alpha.md'), post(`Alpha ${name}`))
    const s = await startServer(t, { repoDir })
    const posts = await list(s, 'posts')
    t.same(posts.map(v => v.id), ['alpha', 'bravo', 'charlie', 'delta'], `${name}: every entry listed`)
    t.equal(posts[0]?.data?.title, `Alpha ${name}`)
    t.equal(posts[3]?.data?.title, 'Delta', `${name}: nothing served from the broken snapshot`)
    t.same(await loadStats(s, 'posts'), { fromSnapshot: 0, read: 4 }, `${name}: a full build`)
    await s.close()
  }
  const table = RowTable.parse(await readFile(file), SNAPSHOT_FORMAT, key, 'title')
  t.ok(table !== null, 'a good snapshot was written again')
  // alpha was written a moment before it was read: racy, so it is left out (read again next time).
  t.equal(table?.size, 3)
  t.same(['alpha', 'bravo', 'charlie', 'delta'].map(id => (table?.find(id) ?? -1) >= 0), [false, true, true, true])
  // The snapshot of the JSON-lines format is ignored, and removed once a new one is written.
  const legacy = path.join(repoDir, '.git', 'cms', 'index', 'posts.json')
  await writeFile(legacy, oldJsonLines)
  await writeFile(path.join(repoDir, 'content/posts/bravo.md'), post('Bravo again'))
  const s = await startServer(t, { repoDir })
  t.equal((await read(s, 'posts', 'bravo'))?.data?.title, 'Bravo again')
  await s.close()
  t.notOk((await readdir(path.dirname(legacy))).includes('posts.json'), 'the old file is removed')
})

t.test('a changed collection definition is not served from the old snapshot', async t => {
  const repoDir = await site(t)
  const before = await startAndStop(t, repoDir)
  t.equal(before.get('posts/alpha')?.validationIssues, undefined)
  // The schema now requires an author: every entry is checked again, nothing comes from the snapshot.
  await writeFile(path.join(repoDir, 'cms.config.yaml'), config('title, author'))
  const s = await startServer(t, { repoDir })
  const posts = await list(s, 'posts')
  t.equal(posts.length, 4)
  t.ok(posts.every(v => Array.isArray(v.validationIssues) && v.validationIssues.length > 0), 'the new schema applies to every entry')
  t.same(await loadStats(s, 'posts'), { fromSnapshot: 0, read: 4 })
  t.same(await loadStats(s, 'docs'), { fromSnapshot: 2, read: 0 }, 'an unchanged collection still uses its snapshot')
  await s.close()

  // Another folder layout: the format of the collection changes from flat to nested.
  await writeFile(path.join(repoDir, 'cms.config.yaml'), config('title').replace('  posts:\n    format: md\n', '  posts:\n    format: md\n    nested: true\n'))
  await mkdir(path.join(repoDir, 'content/posts/2024'))
  await writeFile(path.join(repoDir, 'content/posts/2024/foxtrot.md'), post('Foxtrot'))
  const nested = await startServer(t, { repoDir })
  t.same((await list(nested, 'posts')).map(v => v.id), ['2024/foxtrot', 'alpha', 'bravo', 'charlie', 'delta'])
  t.same(await loadStats(nested, 'posts'), { fromSnapshot: 0, read: 5 })
  await nested.close()
})

t.test('a snapshot write killed half-way leaves a usable state', async t => {
  const repoDir = await site(t)
  await startAndStop(t, repoDir)
  // What a kill between the temp file's creation and its rename leaves: a partial temp file.
  const dir = path.join(repoDir, '.git', 'cms', 'index')
  const partial = path.join(dir, '.cms-tmp-0123456789ab-posts.rows')
  await writeFile(partial, (await readFile(snapshotFile(repoDir, 'posts'))).subarray(0, 40))
  await writeFile(path.join(repoDir, 'content/posts/bravo.md'), post('Bravo again'))
  await settle()
  const s = await startServer(t, { repoDir })
  t.equal((await read(s, 'posts', 'bravo'))?.data?.title, 'Bravo again')
  t.same(await loadStats(s, 'posts'), { fromSnapshot: 3, read: 1 })
  await s.close()
  t.notOk((await readdir(dir)).includes(path.basename(partial)), 'the partial temp file is removed at start')
})

t.test('the real server killed with SIGKILL after saves: the restart serves what was saved', async t => {
  const repoDir = await site(t)
  const first = await spawnServer(t, repoDir)
  const cookie = await loginAt(first.url)
  const headers = writeHeaders(cookie)
  const listed = await (await fetch(`${first.url}/api/cms/entries?collection=posts`, { headers: { cookie } })).json() as ListBody
  t.equal(listed.pagination.total, 4)
  const alpha = listed.entries.find(v => v.id === 'alpha')
  const saved = await fetch(`${first.url}/api/cms/mutate`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ type: 'put_entry', collection: 'posts', id: 'alpha', data: { title: 'Alpha saved', body: 'Saved body.\n' }, expectedRevision: alpha?.revision })
  })
  t.equal(saved.status, 200, await saved.clone().text())
  // An outside change the running service sees (watcher) but has not persisted either.
  await writeFile(path.join(repoDir, 'content/posts/delta.md'), post('Delta outside'))
  await first.kill('SIGKILL')

  const second = await spawnServer(t, repoDir)
  const cookie2 = await loginAt(second.url)
  const after = await (await fetch(`${second.url}/api/cms/entries?collection=posts`, { headers: { cookie: cookie2 } })).json() as ListBody
  t.equal(after.entries.find(v => v.id === 'alpha')?.data?.title, 'Alpha saved')
  t.equal(after.entries.find(v => v.id === 'delta')?.data?.title, 'Delta outside')
  t.ok((after.entries.find(v => v.id === 'alpha')?.revision ?? 0) > (alpha?.revision ?? 0), 'the saved revision is kept')
  await second.kill('SIGTERM')
})

t.test('data JSON cannot carry (Infinity, NaN) comes through the worker as it is and is never persisted', async t => {
  const repoDir = await makeSite(t, { ...FILES, 'content/posts/golf.md': '---\ntitle: Golf\nscore: .inf\nratio: .nan\n---\nBody\n' }, { fixtures: false })
  await settle()
  const dir = path.join(repoDir, 'content/posts')
  const files: Array<[string, string]> = ['alpha', 'golf'].map(id => [id, path.join(dir, `${id}.md`)])
  const rows = await readInWorker({ repoRealDir: await realpath(repoDir), files, rules: { format: 'md', titleField: 'title', orderField: 'order' }, schema: null })
  const golf = rows.find(r => r.id === 'golf')
  t.equal(golf?.fields?.score, Infinity)
  t.ok(Number.isNaN(golf?.fields?.ratio))
  t.equal(rows.find(r => r.id === 'alpha')?.title, 'Alpha aaaa')

  await startAndStop(t, repoDir)
  const table = RowTable.parse(await readFile(snapshotFile(repoDir, 'posts')), SNAPSHOT_FORMAT, (await readFile(snapshotFile(repoDir, 'posts'), 'latin1')).slice(16, 80), 'title')
  t.equal(table?.find('golf'), -1, 'the row is left out of the snapshot')
  t.ok((table?.find('alpha') ?? -1) >= 0)
  // Its revision state is carried beside the rows (the log is not parsed at the next start).
  t.match(JSON.parse(table?.carried ?? '{}'), { ids: ['golf'], revs: [1] })
  const s = await startServer(t, { repoDir })
  t.equal((await list(s, 'posts')).find(v => v.id === 'golf')?.data?.title, 'Golf')
  t.equal((await readEntry(s, 'posts', 'golf'))?.revision, 1, 'its revision from the carried state')
  t.same(await loadStats(s, 'posts'), { fromSnapshot: 4, read: 1 }, 'and read from its file at the next start')
  await s.close()
})

t.test('revisions logged before the signature held the ctime keep their numbers; a changed file still moves', async t => {
  const repoDir = await site(t)
  const legacy = async (id: string): Promise<string> => {
    const st = await stat(path.join(repoDir, 'content/posts', `${id}.md`))
    return `${st.size}:${st.mtimeMs}:${st.ino}`
  }
  const log = [
    { id: 'alpha', rev: 7, sig: await legacy('alpha') },
    { id: 'bravo', rev: 4, sig: `1${await legacy('bravo')}` }
  ].map(l => JSON.stringify(l)).join('\n') + '\n'
  await mkdir(path.join(repoDir, '.git', 'cms', 'revisions'), { recursive: true })
  await writeFile(path.join(repoDir, '.git', 'cms', 'revisions', 'posts.jsonl'), log)
  const s = await startServer(t, { repoDir })
  const posts = await list(s, 'posts')
  t.equal(posts.find(v => v.id === 'alpha')?.revision, 7, 'the same file: the same revision')
  t.equal(posts.find(v => v.id === 'bravo')?.revision, 5, 'another size than logged: the next revision')
  await s.close()
  const again = await startServer(t, { repoDir })
  t.equal((await list(again, 'posts')).find(v => v.id === 'alpha')?.revision, 7, 'and it stays so')
  await again.close()
})
