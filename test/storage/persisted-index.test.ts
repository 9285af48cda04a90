import t from 'tap'
import { link, readFile, readdir, realpath, rm, stat, utimes, writeFile, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { listEntries, readEntry, type EntryView } from '../helpers/entry-api.js'
import { makeSite, startServer, writeHeaders, type TestServer } from '../helpers/site.js'
import { spawnServer, loginAt } from '../helpers/spawn-server.js'
import { RACY_MS } from '../../lib/storage/file-signature.js'

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

async function loadStats (s: TestServer, collection: string): Promise<{ fromStore: number, read: number }> {
  return (await s.services.content.index(collection)).loadStats
}

const storeFile = (repoDir: string): string => path.join(repoDir, '.git', 'cms', 'index.sqlite')

t.test('changes made while the service is down are all seen after a restart', async t => {
  const repoDir = await site(t)
  // A whole second: the mtime set back below is exactly the one it had.
  await utimes(path.join(repoDir, 'content/posts/alpha.md'), 1_700_000_000, 1_700_000_000)
  await settle()
  const before = await startAndStop(t, repoDir)
  t.ok((await stat(storeFile(repoDir))).size > 0, 'the index is persisted in .git/cms/index.sqlite')

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
  t.same(await loadStats(s, 'posts'), { fromStore: 2, read: 2 }, 'only the changed and added files were read')
  t.same(await loadStats(s, 'docs'), { fromStore: 1, read: 1 })
  await s.close()

  // The next start, with nothing changed, reads no file at all.
  const again = await startServer(t, { repoDir })
  t.same((await list(again, 'posts')).map(v => v.id), ['alpha', 'charlie', 'delta', 'echo'])
  t.same(await loadStats(again, 'posts'), { fromStore: 4, read: 0 })
  await again.close()
})

t.test('a corrupt or empty store falls back to a full build', async t => {
  const repoDir = await site(t)
  await startAndStop(t, repoDir)
  for (const [name, broken] of [['garbage', '\u0000\u0001garbage'.repeat(300)], ['empty', '']] as const) {
    await rm(storeFile(repoDir) + '-wal', { force: true })
    await rm(storeFile(repoDir) + '-shm', { force: true })
    await writeFile(storeFile(repoDir), broken)
    await writeFile(path.join(repoDir, 'content/posts/alpha.md'), post(`Alpha ${name}`))
    const s = await startServer(t, { repoDir })
    const posts = await list(s, 'posts')
    t.same(posts.map(v => v.id), ['alpha', 'bravo', 'charlie', 'delta'], `${name}: every entry listed`)
    t.equal(posts[0]?.data?.title, `Alpha ${name}`)
    t.same(await loadStats(s, 'posts'), { fromStore: 0, read: 4 }, `${name}: a full build`)
    await s.close()
  }
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
  t.same(await loadStats(s, 'posts'), { fromStore: 0, read: 4 })
  t.same(await loadStats(s, 'docs'), { fromStore: 2, read: 0 }, 'an unchanged collection still uses its snapshot')
  await s.close()

  // Another folder layout: the format of the collection changes from flat to nested.
  await writeFile(path.join(repoDir, 'cms.config.yaml'), config('title').replace('  posts:\n    format: md\n', '  posts:\n    format: md\n    nested: true\n'))
  await mkdir(path.join(repoDir, 'content/posts/2024'))
  await writeFile(path.join(repoDir, 'content/posts/2024/foxtrot.md'), post('Foxtrot'))
  const nested = await startServer(t, { repoDir })
  t.same((await list(nested, 'posts')).map(v => v.id), ['2024/foxtrot', 'alpha', 'bravo', 'charlie', 'delta'])
  t.same(await loadStats(nested, 'posts'), { fromStore: 0, read: 5 })
  await nested.close()
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

t.test('data JSON cannot carry (Infinity, NaN) is never served from the store', async t => {
  const repoDir = await makeSite(t, { ...FILES, 'content/posts/golf.md': '---\ntitle: Golf\nscore: .inf\nratio: .nan\n---\nBody\n' }, { fixtures: false })
  await settle()
  await startAndStop(t, repoDir)
  const s = await startServer(t, { repoDir })
  const golf = (await (await s.services.content.index('posts')).all()).find(r => r.id === 'golf')
  t.equal(golf?.fields?.score, Infinity)
  t.ok(Number.isNaN(golf?.fields?.ratio))
  t.equal(golf?.revision, 1, 'its revision kept')
  t.same(await loadStats(s, 'posts'), { fromStore: 4, read: 1 }, 'read from its file at the next start')
  await s.close()
})

t.test('an earlier version\'s revision logs are taken in once: no revision goes back', async t => {
  const repoDir = await site(t)
  const state = path.join(repoDir, '.git', 'cms')
  await mkdir(path.join(state, 'index'), { recursive: true })
  await writeFile(path.join(state, 'index', 'posts.rows'), 'old snapshot')
  const legacy = async (id: string): Promise<string> => {
    const st = await stat(path.join(repoDir, 'content/posts', `${id}.md`))
    return `${st.size}:${st.mtimeMs}:${st.ino}`
  }
  const log = [
    { id: 'alpha', rev: 7, sig: await legacy('alpha') },
    { id: 'bravo', rev: 4, sig: `1${await legacy('bravo')}` },
    { id: 'zulu', rev: 9, sig: '12:1:2:3' },
    { id: 'zulu', rev: 10, sig: null }
  ].map(l => JSON.stringify(l)).join('\n') + '\n'
  const checkpoint = JSON.stringify({ checkpoint: 2, ids: 'charlie\nyankee', revs: [3, 6], sigs: `${await legacy('charlie')}\n` })
  await mkdir(path.join(repoDir, '.git', 'cms', 'revisions'), { recursive: true })
  await writeFile(path.join(repoDir, '.git', 'cms', 'revisions', 'posts.jsonl'), `${checkpoint}\n${log}`)
  const s = await startServer(t, { repoDir })
  const posts = await list(s, 'posts')
  t.equal(posts.find(v => v.id === 'alpha')?.revision, 7, 'the same file: the same revision')
  t.equal(posts.find(v => v.id === 'bravo')?.revision, 5, 'another size than logged: the next revision')
  t.equal(posts.find(v => v.id === 'charlie')?.revision, 3, 'a checkpoint line is read')
  await writeFile(path.join(repoDir, 'content/posts/zulu.md'), post('Zulu again'))
  await writeFile(path.join(repoDir, 'content/posts/yankee.md'), post('Yankee again'))
  t.equal((await read(s, 'posts', 'zulu'))?.revision, 11, 'a deleted entry re-created continues its count')
  t.equal((await read(s, 'posts', 'yankee'))?.revision, 7, 'one deleted in a checkpoint too')
  await s.close()
  t.same((await readdir(state)).filter(f => ['index', 'revisions'].includes(f)), [], 'the old state is removed')
  const again = await startServer(t, { repoDir })
  const revs = new Map((await list(again, 'posts')).map(v => [v.id, v.revision]))
  t.same([revs.get('alpha'), revs.get('zulu'), revs.get('yankee')], [7, 11, 7], 'and it stays so')
  await again.close()
})

t.test('an earlier version\'s spare hard links are removed once, and no revision moves for it', async t => {
  const repoDir = await site(t)
  const state = path.join(repoDir, '.git', 'cms')
  const full = async (id: string): Promise<string> => {
    const st = await stat(path.join(repoDir, 'content/posts', `${id}.md`))
    return `${st.size}:${st.mtimeMs}:${st.ino}:${st.ctimeMs}`
  }
  // The inode pool linked entry files under spares/ and logged signatures with the ctime of then.
  await mkdir(path.join(state, 'spares'), { recursive: true })
  await link(path.join(repoDir, 'content/posts/alpha.md'), path.join(state, 'spares', 'a1'))
  await link(path.join(repoDir, 'content/posts/bravo.md'), path.join(state, 'spares', 'b1'))
  const log = [{ id: 'alpha', rev: 5, sig: await full('alpha') }, { id: 'bravo', rev: 3, sig: await full('bravo') }]
  await mkdir(path.join(state, 'revisions'), { recursive: true })
  await writeFile(path.join(state, 'revisions', 'posts.jsonl'), log.map(l => JSON.stringify(l)).join('\n') + '\n')
  const s = await startServer(t, { repoDir })
  const revs = new Map((await list(s, 'posts')).map(v => [v.id, v.revision]))
  t.same([revs.get('alpha'), revs.get('bravo')], [5, 3], 'unlinking the spares changed the ctimes, not the revisions')
  t.equal((await readdir(state)).includes('spares'), false, 'the spares are gone')
  await writeFile(path.join(repoDir, 'content/posts/alpha.md'), post('Alpha edited'))
  t.equal((await read(s, 'posts', 'alpha'))?.revision, 6, 'a real edit afterwards still moves the revision')
  await s.close()
})
