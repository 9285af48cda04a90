import t from 'tap'
import { readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { listEntries, readEntry } from '../helpers/entry-api.js'
import { makeSite, startServer, writeHeaders, type TestServer } from '../helpers/site.js'
import { RACY_MS } from '../../lib/storage/index-snapshot.js'

// Issue 18, ninth pass: a snapshot records its collection folder's signature when its records are
// exactly the folder's entry files, and a restart that finds the folder with that signature lists
// no folder. Every change made while the service is down must still be seen.

const config = `collections:
  posts:
    format: md
    titleField: title
  docs:
    format: md
    nested: true
    titleField: title
`
const post = (title: string): string => `---\ntitle: ${title}\n---\n\nBody.\n`
const FILES: Record<string, string> = {
  'cms.config.yaml': config,
  'content/posts/alpha.md': post('Alpha aaaa'),
  'content/posts/bravo.md': post('Bravo'),
  'content/posts/charlie.md': post('Charlie'),
  'content/docs/guide/intro.md': post('Intro')
}

interface Teardown { teardown: (fn: () => unknown) => void }

async function settle (): Promise<void> {
  await new Promise(resolve => setTimeout(resolve, RACY_MS + 50))
}

const snapshotFile = (repoDir: string, collection: string): string => path.join(repoDir, '.git', 'cms', 'index', `${collection}.rows`)

/** The folder signature a snapshot file carries (its carried text, just before the 16-byte end), or null. */
async function recordedFolder (repoDir: string, collection: string): Promise<string | null> {
  const buf = await readFile(snapshotFile(repoDir, collection))
  const length = buf.readUInt32LE(buf.length - 8)
  if (length === 0) return null
  const carried = JSON.parse(buf.toString('utf8', buf.length - 16 - length, buf.length - 16)) as { folder?: string }
  return carried.folder ?? null
}

async function folderSig (dir: string): Promise<string> {
  const st = await stat(dir)
  return `${st.mtimeMs}:${st.ctimeMs}:${st.ino}`
}

async function index (s: TestServer, collection: string): Promise<{ listedFolder: boolean, loadStats: { fromSnapshot: number, read: number } }> {
  return await s.services.content.index(collection)
}

/** Starts, lists every collection (the builds), and stops (the snapshots written). */
async function startAndStop (t: Teardown, repoDir: string): Promise<void> {
  const s = await startServer(t, { repoDir })
  for (const c of ['posts', 'docs']) await listEntries(s, c)
  await s.close()
}

async function restartedIds (t: Teardown, repoDir: string): Promise<{ s: TestServer, ids: string[] }> {
  const s = await startServer(t, { repoDir })
  return { s, ids: (await listEntries(s, 'posts')).map(v => v.id) }
}

t.test('a settled flat folder is recorded, and a restart with nothing changed lists no folder', async t => {
  const repoDir = await makeSite(t, FILES, { fixtures: false })
  await settle()
  await startAndStop(t, repoDir)
  const posts = path.join(repoDir, 'content/posts')
  t.equal(await recordedFolder(repoDir, 'posts'), await folderSig(posts), 'the flat folder\'s signature is recorded')
  t.equal(await recordedFolder(repoDir, 'docs'), null, 'a nested collection records none')
  const { s, ids } = await restartedIds(t, repoDir)
  t.same(ids, ['alpha', 'bravo', 'charlie'])
  const idx = await index(s, 'posts')
  t.equal(idx.listedFolder, false, 'the folder was not listed')
  t.same(idx.loadStats, { fromSnapshot: 3, read: 0 })
  t.equal((await index(s, 'docs')).listedFolder, true, 'the nested one was')
  await s.close()
})

t.test('an add, a removal or a rename while down is seen even with the folder mtime set back', async t => {
  const cases: Array<[string, (posts: string) => Promise<void>, string[]]> = [
    ['add', async posts => { await writeFile(path.join(posts, 'delta.md'), post('Delta')) }, ['alpha', 'bravo', 'charlie', 'delta']],
    ['removal', async posts => { await rm(path.join(posts, 'bravo.md')) }, ['alpha', 'charlie']],
    ['rename', async posts => { await rename(path.join(posts, 'bravo.md'), path.join(posts, 'bravissimo.md')) }, ['alpha', 'bravissimo', 'charlie']],
    ['rename to another extension', async posts => { await rename(path.join(posts, 'bravo.md'), path.join(posts, 'bravo.markdown')) }, ['alpha', 'bravo', 'charlie']],
    ['hidden file only', async posts => { await writeFile(path.join(posts, '.draft.md'), post('Hidden')) }, ['alpha', 'bravo', 'charlie']]
  ]
  for (const [name, change, expected] of cases) {
    const repoDir = await makeSite(t, FILES, { fixtures: false })
    const posts = path.join(repoDir, 'content/posts')
    // A whole second: the mtime set back below is exactly the one it had.
    await utimes(posts, 1_700_000_000, 1_700_000_000)
    await settle()
    await startAndStop(t, repoDir)
    const recorded = await recordedFolder(repoDir, 'posts')
    t.ok(recorded !== null, `${name}: recorded`)
    const before = await stat(posts)
    await change(posts)
    // The mtime set back to the recorded one: only the ctime tells.
    await utimes(posts, before.atime, before.mtime)
    t.equal((await stat(posts)).mtimeMs, before.mtimeMs, `${name}: same folder mtime`)
    t.not(await folderSig(posts), recorded, `${name}: another ctime`)
    const { s, ids } = await restartedIds(t, repoDir)
    t.same(ids, expected, `${name}: listed as on disk`)
    t.equal((await index(s, 'posts')).listedFolder, true, `${name}: the folder was listed`)
    if (name === 'rename to another extension') t.equal((await readEntry(s, 'posts', 'bravo'))?.data?.title, 'Bravo')
    await s.close()
  }
})

t.test('an edit while down (same size and mtime) with the folder unchanged is read', async t => {
  const repoDir = await makeSite(t, FILES, { fixtures: false })
  await settle()
  await startAndStop(t, repoDir)
  const posts = path.join(repoDir, 'content/posts')
  const recorded = await recordedFolder(repoDir, 'posts')
  const alpha = path.join(posts, 'alpha.md')
  const st = await stat(alpha)
  await writeFile(alpha, (await readFile(alpha, 'utf8')).replace('Alpha aaaa', 'Alpha zzzz'))
  await utimes(alpha, st.atime, st.mtime)
  t.equal(await folderSig(posts), recorded, 'an edit in place leaves the folder as recorded')
  await settle()
  const { s, ids } = await restartedIds(t, repoDir)
  t.same(ids, ['alpha', 'bravo', 'charlie'])
  t.equal((await listEntries(s, 'posts')).find(v => v.id === 'alpha')?.data?.title, 'Alpha zzzz', 'the edit is listed')
  t.same((await index(s, 'posts')).loadStats, { fromSnapshot: 2, read: 1 })
  t.equal((await index(s, 'posts')).listedFolder, true, 'a changed file: the folder was listed as without the signature')
  await s.close()
})

t.test('a folder changed less than RACY_MS before the snapshot is not recorded; the next settled start records it', async t => {
  const repoDir = await makeSite(t, FILES, { fixtures: false })
  // No settle: the folder was just written.
  const s = await startServer(t, { repoDir })
  await listEntries(s, 'posts')
  await s.close()
  t.equal(await recordedFolder(repoDir, 'posts'), null, 'a racy folder is not recorded')
  await settle()
  await startAndStop(t, repoDir)
  t.equal(await recordedFolder(repoDir, 'posts'), await folderSig(path.join(repoDir, 'content/posts')), 'recorded once settled')
  const { s: again, ids } = await restartedIds(t, repoDir)
  t.same(ids, ['alpha', 'bravo', 'charlie'])
  t.equal((await index(again, 'posts')).listedFolder, false)
  await again.close()
})

t.test('a save changes the folder: the restart lists it again, and sees the saved entry', async t => {
  const repoDir = await makeSite(t, FILES, { fixtures: false })
  await settle()
  await startAndStop(t, repoDir)
  const recorded = await recordedFolder(repoDir, 'posts')
  t.ok(recorded !== null)
  const s = await startServer(t, { repoDir })
  await listEntries(s, 'posts')
  const saved = await s.request('/api/cms/mutate', {
    method: 'POST',
    headers: writeHeaders(await s.login()),
    body: JSON.stringify({ type: 'put_entry', collection: 'posts', id: 'echo', data: { title: 'Echo', body: 'New.\n' } })
  })
  t.equal(saved.status, 200, await saved.clone().text())
  await s.close()
  t.not(await folderSig(path.join(repoDir, 'content/posts')), recorded, 'the save changed the folder')
  const { s: again, ids } = await restartedIds(t, repoDir)
  t.same(ids, ['alpha', 'bravo', 'charlie', 'echo'])
  t.equal((await index(again, 'posts')).listedFolder, true)
  await again.close()
})
