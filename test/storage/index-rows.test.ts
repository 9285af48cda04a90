import t from 'tap'
import { mkdir, readFile, realpath, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { FLAT_AND_BUNDLED_CONFIG, listEntries, readEntry } from '../helpers/entry-api.js'
import { makeSite, startServer } from '../helpers/site.js'
import { RACY_MS } from '../../lib/storage/index-snapshot.js'
import { startWaitingStatWorker, statInWorker } from '../../lib/storage/stat-files.js'
import { statEntryFileNow } from '../../lib/storage/entry-file.js'

const CONFIG = FLAT_AND_BUNDLED_CONFIG
const post = (title: string, body = 'Body.'): string => `---\ntitle: ${title}\n---\n\n${body}\n`

async function settle (): Promise<void> {
  await new Promise(resolve => setTimeout(resolve, RACY_MS + 50))
}

const list = listEntries
const read = readEntry

t.test('rows whose file is not the default one of their id keep it across a restart', async t => {
  const repoDir = await makeSite(t, {
    'cms.config.yaml': CONFIG,
    'content/posts/plain.md': post('Plain', 'Plain body.'),
    'content/posts/other.mdx': post('Other', 'Other body.'),
    'content/posts/long.markdown': post('Long', 'Long body.'),
    'content/bundles/one/index.md': post('One', 'One body.'),
    'content/bundles/two.md': post('Two', 'Two body.')
  }, { fixtures: false })
  await settle()
  const first = await startServer(t, { repoDir })
  await first.cms.ready
  t.same((await list(first, 'posts')).map(v => v.id), ['long', 'other', 'plain'])
  await first.close()
  const snapshot = await readFile(path.join(repoDir, '.git/cms/index/posts.rows'), 'utf8')
  t.notOk(snapshot.includes('plain.md'), 'a default file is left out of the snapshot')
  t.ok(snapshot.includes('other.mdx') && snapshot.includes('long.markdown'), 'another file is kept in it')
  t.equal(snapshot.split('"Plain"').length, 2, 'a title that is the title field\'s value is written once (in the fields)')

  // While down: the .mdx file changes with the same size and mtime.
  const other = path.join(repoDir, 'content/posts/other.mdx')
  const st = await stat(other)
  await writeFile(other, post('Othe2', 'Other body.'))
  await utimes(other, st.atime, st.mtime)
  await settle()

  const s = await startServer(t, { repoDir })
  for (const [id, title, body] of [['plain', 'Plain', 'Plain body.'], ['other', 'Othe2', 'Other body.'], ['long', 'Long', 'Long body.']]) {
    const v = await read(s, 'posts', id!)
    t.equal(v?.data?.title, title, `${id!}: its data`)
    t.equal(v?.data?.body, `\n${body!}\n`, `${id!}: its body, read from its own file`)
  }
  t.same((await s.services.content.index('posts')).loadStats, { fromSnapshot: 2, read: 1 })
  const bundles = await s.services.content.index('bundles')
  t.same((await list(s, 'bundles')).map(v => [v.id, v.data?.title]), [['one', 'One'], ['two', 'Two']])
  t.same(bundles.loadStats, { fromSnapshot: 2, read: 0 }, 'a bundle and a plain file beside it')
  t.equal(bundles.fileOf('one'), path.join(repoDir, 'content/bundles/one/index.md'))
  t.equal(bundles.fileOf('two'), path.join(repoDir, 'content/bundles/two.md'))
  t.equal((await read(s, 'bundles', 'two'))?.data?.body, '\nTwo body.\n')
  await s.close()
})

t.test('the stat worker gives the signatures the service thread computes', async t => {
  const dir = await realpath(t.testdir({ 'a.md': 'alpha', 'b.md': 'bravo!', sub: {} }))
  await symlink(path.join(dir, 'a.md'), path.join(dir, 'link.md'))
  await mkdir(path.join(dir, 'sub', 'deeper'))
  const files = ['a.md', 'b.md', 'missing.md', 'sub', 'link.md'].map(f => path.join(dir, f))
  const sigs = await statInWorker(files)
  t.equal(sigs[0], statEntryFileNow(dir, files[0]!))
  t.equal(sigs[1], statEntryFileNow(dir, files[1]!))
  t.equal(sigs[2], null, 'missing')
  t.equal(sigs[3], null, 'a folder is no entry file')
  t.equal(sigs[4], undefined, 'a link is left to the service thread (it checks where it leads)')
  t.equal(sigs.length, 5)
})

t.test('a waiting stat worker posts its first pass in chunks, in order; one never given files ends', async t => {
  const dir = await realpath(t.testdir({ 'a.md': 'alpha', 'b.md': 'bravo!' }))
  // 9,000 paths: three chunks; every third a real file.
  const files = Array.from({ length: 9000 }, (_, i) => path.join(dir, i % 3 === 0 ? 'a.md' : i % 3 === 1 ? 'b.md' : `missing-${i}.md`))
  const waiting = startWaitingStatWorker()
  const pass = waiting.pass(files)
  t.equal(await pass.ready(4096), true)
  t.ok(pass.results.length >= 4096, 'the first chunk is there')
  t.equal(await pass.ready(20_000), true, 'asking past the end waits for every result')
  t.equal(pass.results.length, 9000)
  const a = statEntryFileNow(dir, files[0]!)
  const b = statEntryFileNow(dir, files[1]!)
  t.ok(pass.results.every((sig, i) => sig === (i % 3 === 0 ? a : i % 3 === 1 ? b : null)), 'each result at its file\'s position')
  t.same(await pass.sigs, pass.results)
  t.same(await pass.again(), [], 'nothing changed since')
  const unused = startWaitingStatWorker()
  unused.end()
  t.throws(() => unused.pass(files), /already/)
})

t.test('the service thread stats chunks from the end while it waits; the second pass covers them too', async t => {
  const dir = await realpath(t.testdir({ 'a.md': 'alpha', 'b.md': 'bravo!' }))
  // 20,000 paths: five chunks, the last one short; every third a real file.
  const files = Array.from({ length: 20_000 }, (_, i) => path.join(dir, i % 3 === 0 ? 'a.md' : i % 3 === 1 ? 'b.md' : `missing-${i}.md`))
  const pass = startWaitingStatWorker().pass(files)
  // Asking for everything at once: this thread claims chunks from the end while the worker goes on from the start.
  t.equal(await pass.ready(20_000), true)
  const a = statEntryFileNow(dir, files[0]!)
  const b = statEntryFileNow(dir, files[1]!)
  t.equal(pass.results.length, 20_000)
  t.ok(pass.results.every((sig, i) => sig === (i % 3 === 0 ? a : i % 3 === 1 ? b : null)), 'each result at its file\'s position, whichever thread stat-ed it')
  t.same(await pass.sigs, pass.results)
  // An edit keeping the size: every position of that file changed, in the worker's chunks and in this thread's.
  await new Promise(resolve => setTimeout(resolve, 20))
  await writeFile(path.join(dir, 'a.md'), 'ALPHA')
  const changed = await pass.again()
  t.same(changed, files.flatMap((_, i) => i % 3 === 0 ? [i] : []), 'exactly the edited file\'s positions')
})

t.test('a restart of a collection large enough for the stat worker still notices edits, adds and deletes made while down', async t => {
  // 4,100 files: over the size from which a restart stats its files in a worker.
  const files: Record<string, string> = { 'cms.config.yaml': 'collections:\n  posts:\n    format: md\n    titleField: title\n' }
  for (let i = 0; i < 4100; i++) files[`content/posts/p${String(i).padStart(4, '0')}.md`] = post(`Post ${String(i).padStart(4, '0')}`)
  const repoDir = await makeSite(t, files, { fixtures: false })
  await settle()
  const first = await startServer(t, { repoDir })
  await first.cms.ready
  t.equal((await (await first.services.content.index('posts')).all()).length, 4100)
  await first.close()

  // While down: one file keeps its size and mtime with other text, one is deleted, one is added.
  const edited = path.join(repoDir, 'content/posts/p1234.md')
  const st = await stat(edited)
  await writeFile(edited, post('Post 12X4'))
  await utimes(edited, st.atime, st.mtime)
  await rm(path.join(repoDir, 'content/posts/p0007.md'))
  await writeFile(path.join(repoDir, 'content/posts/new.md'), post('New one'))
  await settle()

  const s = await startServer(t, { repoDir })
  const index = await s.services.content.index('posts')
  t.equal((await read(s, 'posts', 'p1234'))?.data?.title, 'Post 12X4', 'the same-size, same-mtime edit is read')
  t.equal(await read(s, 'posts', 'p0007'), null, 'the deleted file is gone')
  t.equal((await read(s, 'posts', 'new'))?.data?.title, 'New one', 'the added file is there')
  t.same(index.loadStats, { fromSnapshot: 4098, read: 2 })
  // Untouched rows of a snapshot this large are read back from its file when first used.
  await new Promise(resolve => setImmediate(resolve))
  t.equal((await read(s, 'posts', 'p2000'))?.data?.title, 'Post 2000', 'a row parsed from the snapshot file')
  await s.close()

  // The snapshot rewritten at close copied the untouched rows from that file.
  const again = await startServer(t, { repoDir })
  const rows = await (await again.services.content.index('posts')).all()
  t.same((await again.services.content.index('posts')).loadStats, { fromSnapshot: 4100, read: 0 })
  t.same([rows[0]?.title, rows[3000]?.title, rows.find(r => r.id === 'p1234')?.title, rows.find(r => r.id === 'new')?.title], ['New one', 'Post 3000', 'Post 12X4', 'New one'])
  await again.close()
})
