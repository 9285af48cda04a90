import t, { type Test } from 'tap'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, stat, truncate, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { makeSite, startServer, type TestServer } from '../helpers/site.js'
import { RACY_MS } from '../../lib/storage/file-signature.js'

interface ListBody { entries: Array<{ id: string }>, pagination: { total: number } }

const config = (extra = ''): string => `collections:
  posts:
    format: md
    titleField: title
${extra}`

const post = (title: string, body: string): string => `---\ntitle: ${title}\n---\n\n${body}\n`

const FILES: Record<string, string> = {
  'cms.config.yaml': config(),
  'content/posts/alpha.md': post('Alpha', 'The lighthouse keeper counts gulls.'),
  'content/posts/bravo.md': post('Bravo', 'A walrus sleeps on the quay.'),
  'content/posts/charlie.md': post('Charlie', 'Tulips and walrus tusks.'),
  'content/posts/delta.md': post('Delta', 'Nothing to see.')
}

/** Files written so far are no longer racy (a persisted document of theirs is trusted). */
async function settle (): Promise<void> {
  await new Promise(resolve => setTimeout(resolve, RACY_MS + 50))
}

async function q (s: TestServer, words: string): Promise<string[]> {
  const res = await s.request(`/api/cms/entries?collection=posts&q=${encodeURIComponent(words)}`, { headers: { cookie: await s.login() } })
  t.equal(res.status, 200)
  return ((await res.json()) as ListBody).entries.map(e => e.id).sort()
}

async function searchState (s: TestServer): Promise<{ builds: number, loadStats: { fromSnapshot: number, read: number } }> {
  const search = s.services.search.of(await s.services.content.index('posts'))
  const { builds, ...loadStats } = search.stats
  return { builds, loadStats }
}

const persisted = (repoDir: string): string => path.join(repoDir, '.git', 'cms', 'fts', 'posts.sqlite')


/** A site whose full-text index was built and persisted by one run of the service. */
async function persistedSite (t: Test): Promise<string> {
  const repoDir = await makeSite(t, FILES, { fixtures: false })
  // A whole second: the mtime an edit restores below is exactly the one it had.
  await utimes(path.join(repoDir, 'content/posts/alpha.md'), 1_700_000_000, 1_700_000_000)
  await settle()
  const s = await startServer(t, { repoDir })
  t.same(await q(s, 'walrus'), ['bravo', 'charlie'])
  t.equal((await searchState(s)).builds, 1, 'the first start builds')
  await s.close()
  return repoDir
}

t.test('a restart loads the persisted index instead of building, and sees changes made while down', async t => {
  const repoDir = await persistedSite(t)
  t.ok((await stat(persisted(repoDir))).size > 0, 'persisted under .git/cms/fts/')

  const same = await startServer(t, { repoDir })
  t.same(await q(same, 'walrus'), ['bravo', 'charlie'], 'the same answers')
  t.same(await q(same, 'lighthouse'), ['alpha'])
  t.same(await searchState(same), { builds: 0, loadStats: { fromSnapshot: 4, read: 0 } }, 'no build, no file read')
  await same.close()

  // Edited with the same size and mtime; one added, one deleted, all while the service is down.
  const alpha = path.join(repoDir, 'content/posts/alpha.md')
  const before = await stat(alpha)
  const text = await readFile(alpha, 'utf8')
  const edited = text.replace('lighthouse', 'beaconlamp')
  t.equal(edited.length, text.length)
  await writeFile(alpha, edited)
  await utimes(alpha, before.atime, before.mtime)
  const after = await stat(alpha)
  t.equal(after.size, before.size, 'same size')
  t.equal(after.mtimeMs, before.mtimeMs, 'same mtime')
  await writeFile(path.join(repoDir, 'content/posts/echo.md'), post('Echo', 'A second walrus and a heron.'))
  await rm(path.join(repoDir, 'content/posts/bravo.md'))
  await settle()

  const s = await startServer(t, { repoDir })
  t.same(await q(s, 'lighthouse'), [], 'the old word of an edited file is gone')
  t.same(await q(s, 'beaconlamp'), ['alpha'], 'its new word is found')
  t.same(await q(s, 'walrus'), ['charlie', 'echo'], 'a deleted file is not found, an added one is')
  t.same(await q(s, 'heron'), ['echo'])
  t.same(await searchState(s), { builds: 0, loadStats: { fromSnapshot: 2, read: 2 } }, 'only the edited and added files were read')
  // A change while it runs still reaches the loaded index.
  await writeFile(path.join(repoDir, 'content/posts/delta.md'), post('Delta', 'A walrus at last.'))
  let found: string[] = []
  for (let i = 0; i < 100 && !found.includes('delta'); i++) {
    found = await q(s, 'walrus')
    if (!found.includes('delta')) await new Promise(resolve => setTimeout(resolve, 50))
  }
  t.same(found, ['charlie', 'delta', 'echo'])
  await s.close()
})

t.test('a damaged persisted index falls back to a full build; an old segment folder is removed', async t => {
  const repoDir = await persistedSite(t)
  const file = persisted(repoDir)
  const good = await readFile(file)
  const legacy = path.join(repoDir, '.git', 'cms', 'search')
  await mkdir(legacy)
  await writeFile(path.join(legacy, 'posts.bin'), 'a segment of an earlier version')
  const breakers: Array<[string, () => Promise<void>]> = [
    ['truncated', async () => { await writeFile(file, good); await truncate(file, Math.floor(good.length / 2)) }],
    ['garbage', async () => { await writeFile(file, 'not a database') }],
    ['empty', async () => { await writeFile(file, '') }]
  ]
  for (const [name, breakIt] of breakers) {
    await breakIt()
    const s = await startServer(t, { repoDir })
    t.same(await q(s, 'walrus'), ['bravo', 'charlie'], `${name}: right answers`)
    t.same(await searchState(s), { builds: 1, loadStats: { fromSnapshot: 0, read: 0 } }, `${name}: a full build`)
    await s.close()
  }
  t.equal(existsSync(legacy), false, 'the old segment folder is gone')
  // A flipped byte SQLite may never read: the answers stay right either way.
  const flipped = Buffer.from(good)
  flipped[good.length - 20] = (flipped[good.length - 20] as number) ^ 0x55
  await writeFile(file, flipped)
  const s = await startServer(t, { repoDir })
  t.same(await q(s, 'walrus'), ['bravo', 'charlie'], 'a flipped byte: right answers')
  await s.close()
  const again = await startServer(t, { repoDir })
  t.same(await q(again, 'lighthouse'), ['alpha'])
  t.equal((await searchState(again)).builds, 0, 'the full build persisted a good database again')
  await again.close()
})

t.test('a changed collection definition does not use the old persisted index', async t => {
  const repoDir = await persistedSite(t)
  // Another schema.
  await writeFile(path.join(repoDir, 'cms.config.yaml'), config('    schema:\n      type: object\n      properties:\n        title: { type: string }\n'))
  const s = await startServer(t, { repoDir })
  t.same(await q(s, 'walrus'), ['bravo', 'charlie'])
  t.equal((await searchState(s)).builds, 0, 'a schema change: the indexed text is the same, kept')
  await s.close()
  // Another title field: the title column changes.
  await writeFile(path.join(repoDir, 'cms.config.yaml'), config().replace('titleField: title', 'titleField: name'))
  const retitled = await startServer(t, { repoDir })
  t.same(await q(retitled, 'walrus'), ['bravo', 'charlie'])
  t.equal((await searchState(retitled)).builds, 1, 'a title field change: a full build')
  await retitled.close()
  // Another folder: the same file name, other entries.
  await writeFile(path.join(repoDir, 'content/other.md'), post('Other', 'An otter.'))
  await writeFile(path.join(repoDir, 'cms.config.yaml'), config('    folder: content/elsewhere\n'))
  await mkdir(path.join(repoDir, 'content/elsewhere'))
  await writeFile(path.join(repoDir, 'content/elsewhere/zulu.md'), post('Zulu', 'Walrus in another folder.'))
  const moved = await startServer(t, { repoDir })
  t.same(await q(moved, 'walrus'), ['zulu'], 'only the new folder\'s entries')
  await moved.close()
})

t.test('a file changed just before the build is not trusted at the next start (racy signature)', async t => {
  const repoDir = await makeSite(t, FILES, { fixtures: false })
  await settle()
  // Written a moment before the build reads it: a rewrite in the same timestamp tick could keep
  // its signature, so its document is persisted as not to be trusted.
  await writeFile(path.join(repoDir, 'content/posts/delta.md'), post('Delta', 'A fresh walrus.'))
  const s = await startServer(t, { repoDir })
  t.same(await q(s, 'walrus'), ['bravo', 'charlie', 'delta'])
  await s.close()
  const again = await startServer(t, { repoDir })
  t.same(await q(again, 'walrus'), ['bravo', 'charlie', 'delta'])
  t.same(await searchState(again), { builds: 0, loadStats: { fromSnapshot: 3, read: 1 } }, 'the racy file is read again')
  await again.close()
})

t.test('the persisted index removed while the service runs: right answers, and the next start builds it again', async t => {
  const repoDir = await persistedSite(t)
  const s = await startServer(t, { repoDir })
  t.same(await q(s, 'walrus'), ['bravo', 'charlie'])
  t.equal((await searchState(s)).builds, 0, 'loaded')
  for (const suffix of ['', '-wal', '-shm']) await rm(persisted(repoDir) + suffix, { force: true })
  await writeFile(path.join(repoDir, 'content/posts/delta.md'), post('Delta', 'A walrus at last.'))
  let found: string[] = []
  for (let i = 0; i < 100 && !found.includes('delta'); i++) {
    found = await q(s, 'walrus')
    if (!found.includes('delta')) await new Promise(resolve => setTimeout(resolve, 50))
  }
  t.same(found, ['bravo', 'charlie', 'delta'], 'the edit is found')
  t.same(await q(s, 'lighthouse'), ['alpha'])
  await s.close()
  const again = await startServer(t, { repoDir })
  t.same(await q(again, 'walrus'), ['bravo', 'charlie', 'delta'])
  t.equal((await searchState(again)).builds, 1, 'built afresh from the files')
  await again.close()
})
