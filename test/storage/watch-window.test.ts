// A build no longer waits for the file watcher's subscription (its walk of every file) before it
// lists and stats the files: changes made between that stat and the moment the watcher listens
// must still be noticed, once it listens (CollectionIndex.caughtUp), with no watcher event at all.
import t from 'tap'
import { mkdir, realpath, rm, stat, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { loadConfig } from '../../lib/config.js'
import { CollectionRegistry } from '../../lib/storage/collection-registry.js'
import { CollectionIndex } from '../../lib/storage/collection-index.js'
import { IndexStore } from '../../lib/storage/index-store.js'
import { RACY_MS } from '../../lib/storage/file-signature.js'
import { makeSite } from '../helpers/site.js'
import { FLAT_AND_BUNDLED_CONFIG } from '../helpers/entry-api.js'

const post = (title: string): string => `---\ntitle: ${title}\n---\n\nBody.\n`
const CONFIG = FLAT_AND_BUNDLED_CONFIG

async function settle (): Promise<void> {
  await new Promise(resolve => setTimeout(resolve, RACY_MS + 50))
}

/** An index over a site's collection, with a watcher subscription the test resolves by hand. */
async function openIndex (repoDir: string, name: string, watching?: Promise<boolean>): Promise<CollectionIndex> {
  const repoReal = await realpath(repoDir)
  const registry = new CollectionRegistry(repoDir, await loadConfig(repoDir))
  await registry.load()
  const collection = (await registry.get(name))!
  const stateDir = path.join(repoDir, '.git', 'cms')
  return new CollectionIndex({
    collection,
    repoRealDir: repoReal,
    store: new IndexStore(stateDir),
    validate: () => [],
    watching
  })
}

/** Builds a collection once and persists its snapshot (the previous run). */
async function previousRun (repoDir: string, name: string): Promise<void> {
  const index = await openIndex(repoDir, name)
  await index.ready()
}

const titles = async (index: CollectionIndex): Promise<Record<string, unknown>> =>
  Object.fromEntries((await index.all()).map(row => [row.id, row.fields?.title]))

/** Rewrites a file with other text of the same size, its mtime set back: only its ctime tells. */
async function editKeepingSizeAndMtime (file: string, text: string): Promise<void> {
  const st = await stat(file)
  await writeFile(file, text)
  await utimes(file, st.atime, st.mtime)
}

// 4,100 files are stat-ed in this thread by default (below STAT_WORKER_MIN_FILES), and by the stat
// worker when the index is told to use it from 4,000 files on. Their titles are long enough that
// the snapshot holds over 16,384 x 40 bytes (the early worker started, then ended unused, for a
// snapshot that size, before the early start asked for 160 bytes a row) and over 4,000 x 160 (the
// worker case starts it early).
const LONG = ' with a title long enough for a snapshot of some size'.repeat(4)
for (const count of [3, 4100]) {
  const tail = count > 100 ? LONG : ''
  t.test(`${count} files: an edit between the build's stat and the subscription is picked up once the watcher listens`, async t => {
    const files: Record<string, string> = { 'cms.config.yaml': CONFIG }
    for (let i = 0; i < count; i++) files[`content/posts/p${String(i).padStart(4, '0')}.md`] = post(`Post ${String(i).padStart(4, '0')}${tail}`)
    const repoDir = await makeSite(t, files, { fixtures: false, commit: false })
    await settle()
    await previousRun(repoDir, 'posts')
    await settle()

    let subscribe = (_listening: boolean): void => {}
    const watching = new Promise<boolean>(resolve => { subscribe = resolve })
    const index = await openIndex(repoDir, 'posts', watching)
    await index.ready()
    t.same(index.loadStats, { fromStore: count, read: 0 }, 'built from the store before the watcher listens')

    // In the window: the same size and mtime, other text (no event: nothing is subscribed).
    await editKeepingSizeAndMtime(path.join(repoDir, 'content/posts/p0001.md'), post(`Post 0OO1${tail}`))
    t.equal((await titles(index)).p0001, `Post 0001${tail}`, 'served from the build\'s stat meanwhile (the window the check closes)')

    subscribe(true)
    await index.caughtUp
    const after = await titles(index)
    t.equal(after.p0001, `Post 0OO1${tail}`, 'the edit is read once the watcher listens')
    t.equal(after.p0002, `Post 0002${tail}`, 'the others are kept')
    t.equal(Object.keys(after).length, count)
    })
}

t.test('4100 files: a file read at the build (changed while down) and edited again in the window is picked up', async t => {
  // The stat pass covers the snapshot's records; a file read instead is checked against its row.
  const files: Record<string, string> = { 'cms.config.yaml': CONFIG }
  for (let i = 0; i < 4100; i++) files[`content/posts/p${String(i).padStart(4, '0')}.md`] = post(`Post ${String(i).padStart(4, '0')}`)
  const repoDir = await makeSite(t, files, { fixtures: false, commit: false })
  await settle()
  await previousRun(repoDir, 'posts')
  await writeFile(path.join(repoDir, 'content/posts/p0002.md'), post('Post two, longer'))
  await writeFile(path.join(repoDir, 'content/posts/added.md'), post('Added'))
  await settle()

  let subscribe = (_listening: boolean): void => {}
  const index = await openIndex(repoDir, 'posts', new Promise<boolean>(resolve => { subscribe = resolve }))
  await index.ready()
  t.same(index.loadStats, { fromStore: 4099, read: 2 })
  await editKeepingSizeAndMtime(path.join(repoDir, 'content/posts/p0002.md'), post('Post TWO, longer'))
  await editKeepingSizeAndMtime(path.join(repoDir, 'content/posts/added.md'), post('ADDED'))
  t.equal((await titles(index)).p0002, 'Post two, longer', 'served from the build\'s read meanwhile')

  subscribe(true)
  await index.caughtUp
  const after = await titles(index)
  t.equal(after.p0002, 'Post TWO, longer', 'the edit of a file read at the build is read once the watcher listens')
  t.equal(after.added, 'ADDED', 'and of a file added while down')
  t.equal(after.p0003, 'Post 0003')
})

t.test('a build from the files (no snapshot) checks them again too', async t => {
  const repoDir = await makeSite(t, { 'cms.config.yaml': CONFIG, 'content/posts/alpha.md': post('Alpha'), 'content/posts/bravo.md': post('Bravo') }, { fixtures: false, commit: false })
  await settle()
  let subscribe = (_listening: boolean): void => {}
  const index = await openIndex(repoDir, 'posts', new Promise<boolean>(resolve => { subscribe = resolve }))
  await index.ready()
  t.same(index.loadStats, { fromStore: 0, read: 2 })
  await editKeepingSizeAndMtime(path.join(repoDir, 'content/posts/bravo.md'), post('BRAVO'))
  subscribe(true)
  await index.caughtUp
  t.same(await titles(index), { alpha: 'Alpha', bravo: 'BRAVO' })
})

t.test('adds and removals in the window, in a flat and in a bundled collection', async t => {
  const repoDir = await makeSite(t, {
    'cms.config.yaml': CONFIG,
    'content/posts/alpha.md': post('Alpha'),
    'content/posts/bravo.md': post('Bravo'),
    'content/bundles/one/index.md': post('One'),
    'content/bundles/deep/two/index.md': post('Two')
  }, { fixtures: false, commit: false })
  await settle()
  await previousRun(repoDir, 'posts')
  await previousRun(repoDir, 'bundles')
  await settle()

  let subscribe = (_listening: boolean): void => {}
  const watching = new Promise<boolean>(resolve => { subscribe = resolve })
  const posts = await openIndex(repoDir, 'posts', watching)
  const bundles = await openIndex(repoDir, 'bundles', watching)
  await posts.ready()
  await bundles.ready()

  await rm(path.join(repoDir, 'content/posts/alpha.md'))
  await writeFile(path.join(repoDir, 'content/posts/charlie.md'), post('Charlie'))
  // Deeper than the collection folder: its own mtime does not change.
  await mkdir(path.join(repoDir, 'content/bundles/deep/three'))
  await writeFile(path.join(repoDir, 'content/bundles/deep/three/index.md'), post('Three'))
  await rm(path.join(repoDir, 'content/bundles/deep/two/index.md'))

  subscribe(true)
  await Promise.all([posts.caughtUp, bundles.caughtUp])
  t.same(await titles(posts), { bravo: 'Bravo', charlie: 'Charlie' })
  t.same(await titles(bundles), { 'deep/three': 'Three', one: 'One' })
})

t.test('a build that starts once the watcher listens makes no second check', async t => {
  const repoDir = await makeSite(t, { 'cms.config.yaml': CONFIG, 'content/posts/alpha.md': post('Alpha') }, { fixtures: false, commit: false })
  const index = await openIndex(repoDir, 'posts')
  await index.ready()
  await index.caughtUp
  t.same(await titles(index), { alpha: 'Alpha' })
})
