// Rows read from their files in this thread (a small collection's first build, an entry changed)
// keep their parsed data only until the snapshot holding them is written: then they point at its
// records, as after a restart (collection-index.ts `#adopt`, issue 18 memory). Same answers before
// and after, and changes after it are still seen.
import t from 'tap'
import { realpath, stat, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { loadConfig } from '../../lib/config.js'
import { CollectionRegistry } from '../../lib/storage/collection-registry.js'
import { CollectionIndex } from '../../lib/storage/collection-index.js'
import { RevisionLog } from '../../lib/storage/revision-log.js'
import { IndexSnapshot, RACY_MS } from '../../lib/storage/index-snapshot.js'
import { makeSite } from '../helpers/site.js'
import { FLAT_AND_BUNDLED_CONFIG } from '../helpers/entry-api.js'

const post = (title: string, tag: string): string => `---\ntitle: ${title}\ntags: [${tag}, common]\n---\n\nBody of ${title}.\n`

async function openIndex (repoDir: string, name: string): Promise<CollectionIndex> {
  const repoReal = await realpath(repoDir)
  const registry = new CollectionRegistry(repoDir, await loadConfig(repoDir))
  await registry.load()
  const collection = (await registry.get(name))!
  const stateDir = path.join(repoDir, '.git', 'cms')
  return new CollectionIndex({ collection, repoRealDir: repoReal, log: new RevisionLog(stateDir, name), validate: () => [], snapshot: new IndexSnapshot(stateDir, collection, repoReal) })
}

const view = async (index: CollectionIndex): Promise<unknown[]> =>
  (await index.all()).map(row => ({ id: row.id, title: row.title, fields: row.fields, bodyAt: row.bodyAt, revision: row.revision, sig: row.sig, file: row.file }))

async function untilLazy (index: CollectionIndex, ids: string[]): Promise<boolean> {
  const deadline = Date.now() + 5000
  while (Date.now() < deadline) {
    const rows = await index.all()
    if (rows.filter(r => ids.includes(r.id)).every(r => (r as unknown as { lazySource: () => unknown }).lazySource() !== null)) return true
    await new Promise(resolve => setTimeout(resolve, 20))
  }
  return false
}

t.test('a small collection built from its files: rows become lazy once persisted, with the same answers', async t => {
  const files: Record<string, string> = { 'cms.config.yaml': FLAT_AND_BUNDLED_CONFIG, 'content/bundles/one/index.md': post('One', 'b') }
  for (let i = 0; i < 40; i++) files[`content/posts/p${i}.md`] = post(`Post ${i}`, `t${i}`)
  const repoDir = await makeSite(t, files, { fixtures: false, commit: false })
  await new Promise(resolve => setTimeout(resolve, RACY_MS + 50))
  for (const name of ['posts', 'bundles']) {
    const index = await openIndex(repoDir, name)
    await index.ready()
    t.same(index.loadStats, { fromSnapshot: 0, read: name === 'posts' ? 40 : 1 })
    const before = await view(index)
    const ids = (await index.all()).map(r => r.id)
    t.ok(await untilLazy(index, ids), `${name}: every row lazy once the snapshot is written`)
    // Taking the rows onto the file changed nothing anyone sees (the view parses them again).
    t.same(await view(index), before, `${name}: the same rows`)
    const one = await index.get(ids[0]!)
    t.match(one?.data?.body, /^\s*Body of (Post 0|One)\.\s*$/, 'a read gives the body back from the file')
    await index.flushSnapshot()
  }

  // Changes after it: an outside edit keeping size and mtime (a read stats the file), a service write.
  const index = await openIndex(repoDir, 'posts')
  await index.ready()
  t.ok(await untilLazy(index, ['p1']), 'lazy after a restart too')
  const file = path.join(repoDir, 'content/posts/p1.md')
  const st = await stat(file)
  await writeFile(file, post('POST 1', 't1'))
  await utimes(file, st.atime, st.mtime)
  t.equal((await index.get('p1'))?.title, 'POST 1', 'an outside edit after the swap is read')
  const text = post('Saved', 'x')
  await writeFile(file, text)
  await index.recordWrite('p1', { title: 'Saved', tags: ['x', 'common'] }, { file, text })
  t.equal((await index.all()).find(r => r.id === 'p1')?.title, 'Saved')
  await index.flushSnapshot()
})
