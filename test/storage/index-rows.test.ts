import t from 'tap'
import { mkdir, readFile, realpath, rename, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { FLAT_AND_BUNDLED_CONFIG, listEntries, readEntry } from '../helpers/entry-api.js'
import { makeSite, startServer } from '../helpers/site.js'
import { RACY_MS } from '../../lib/storage/index-snapshot.js'
import { startStatPass, startWaitingStatWorker, statInWorker, type PackedFiles } from '../../lib/storage/stat-files.js'
import { RowTable, RowTableWriter, type RecordRow } from '../../lib/storage/row-table.js'
import { SIG_DIFFERS, SIG_SAME, SIG_SAME_RACY, SIG_UNKNOWN, sigFlag } from '../../lib/storage/stat-one.js'
import { SNAPSHOT_FORMAT } from '../../lib/storage/index-snapshot.js'
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

/** A row table over records (as a snapshot file holds them), and the packed stat list of its files. */
function packedOver (rows: RecordRow[], prefix: string, statAt: number): { table: RowTable, files: PackedFiles } {
  const parts: Buffer[] = []
  const writer = new RowTableWriter(SNAPSHOT_FORMAT, 'key', 'title', chunk => { parts.push(Buffer.from(chunk)) })
  for (const r of rows) if (!writer.add(r)) throw new Error(`row ${r.id} not written`)
  writer.end()
  const table = RowTable.parse(Buffer.concat(parts), SNAPSHOT_FORMAT, 'key', 'title')
  if (table === null) throw new Error('not parsed')
  const files: PackedFiles = { count: table.size, records: table.sharedRecords(), prefix, suffix: '.md', statAt, at: i => table.file(i) ?? prefix + table.id(i) + '.md', same: (i, sig) => table.sigEquals(i, sig) }
  return { table, files }
}

t.test('a packed stat pass walks a snapshot\'s records and tells how each file compares with its record', async t => {
  const dir = await realpath(t.testdir({ 'a.md': 'alpha', 'b.md': 'bravo!', 'd0.md': 'delta', 'd1.md': 'delta 1' }))
  await symlink(path.join(dir, 'a.md'), path.join(dir, 'link.md'))
  const sigOf = (f: string): string => statEntryFileNow(dir, path.join(dir, f)) as string
  const content = { fields: { title: 'T' }, title: 'T', order: null }
  // 9,000 records (three chunks): their own file a.md with its signature (same), b.md with another
  // (differs), a missing default file (differs), a link (the caller stats it); then two default files.
  const expected: number[] = []
  const rows: RecordRow[] = Array.from({ length: 9000 }, (_, i) => {
    const kind = i % 4
    expected.push([SIG_SAME, SIG_DIFFERS, SIG_DIFFERS, SIG_UNKNOWN][kind]!)
    const file = kind === 0 ? path.join(dir, 'a.md') : kind === 1 ? path.join(dir, 'b.md') : kind === 2 ? null : path.join(dir, 'link.md')
    return { id: `p${i}`, sig: kind === 0 ? sigOf('a.md') : kind === 1 ? sigOf('b.md').replace(/^\d+/, '99') : '6:1700000000000:1:1700000000000', order: null, file, content }
  })
  rows.push({ id: 'd0', sig: sigOf('d0.md'), order: null, file: null, content }, { id: 'd1', sig: sigOf('d0.md'), order: null, file: null, content })
  expected.push(SIG_SAME, SIG_DIFFERS)
  const ctime = (await stat(path.join(dir, 'a.md'))).ctimeMs
  const { files } = packedOver(rows, `${dir}${path.sep}`, ctime + RACY_MS + 5000)
  t.equal(files.at(9000), path.join(dir, 'd0.md'), 'a default file is the folder, the id and the extension')
  t.equal(files.at(1), path.join(dir, 'b.md'), 'another file is the record\'s')
  const pass = startStatPass(files)
  // Asking for everything at once: this thread claims chunks from the end too (its flags made here).
  t.equal(await pass.ready(20_000), true)
  t.same([...pass.flags!], expected, 'each file\'s flag at its record\'s position, whichever thread stat-ed it')
  t.same(pass.results, [], 'no signature string crosses over')
  // The second pass compares signatures, as for a list of paths.
  await new Promise(resolve => setTimeout(resolve, 20))
  await writeFile(path.join(dir, 'd0.md'), 'DELTA')
  const changed = await pass.again()
  t.same(changed, expected.flatMap((_, i) => i % 4 === 3 && i < 9000 ? [i] : i === 9000 ? [i] : []), 'the edited file, and the links (always re-checked)')

  // A file whose ctime is within RACY_MS of the pass's start has its record's signature, racy.
  const racy = packedOver(rows.slice(0, 8), `${dir}${path.sep}`, ctime + RACY_MS / 2)
  const racyPass = startStatPass(racy.files)
  t.equal(await racyPass.ready(8), true)
  t.same([...racyPass.flags!], [SIG_SAME_RACY, SIG_DIFFERS, SIG_DIFFERS, SIG_UNKNOWN, SIG_SAME_RACY, SIG_DIFFERS, SIG_DIFFERS, SIG_UNKNOWN])
  racyPass.end()
})

t.test('sigFlag', async t => {
  const sig = '5:1700000000000.5:7:1700000000000.25'
  t.equal(sigFlag(undefined, false, 0), SIG_UNKNOWN)
  t.equal(sigFlag(null, false, 0), SIG_DIFFERS)
  t.equal(sigFlag(sig, false, 1800000000000), SIG_DIFFERS)
  t.equal(sigFlag(sig, true, 1700000000000.25 + RACY_MS), SIG_SAME, 'a ctime RACY_MS before the pass began')
  t.equal(sigFlag(sig, true, 1700000000000.25 + RACY_MS - 1), SIG_SAME_RACY)
  t.equal(sigFlag(sig, true, 1600000000000), SIG_SAME_RACY, 'a ctime after the pass began')
  t.equal(sigFlag('5:1700000000000:7', true, 1800000000000), SIG_SAME_RACY, 'no ctime: racy')
})

t.test('a restart of a bundled collection large enough for the stat worker (a list of paths, not packed records) notices changes made while down', async t => {
  const files: Record<string, string> = { 'cms.config.yaml': CONFIG }
  for (let i = 0; i < 4100; i++) files[`content/bundles/b${String(i).padStart(4, '0')}/index.md`] = post(`Bundle ${String(i).padStart(4, '0')}`)
  const repoDir = await makeSite(t, files, { fixtures: false })
  await settle()
  const first = await startServer(t, { repoDir })
  await first.cms.ready
  t.equal((await (await first.services.content.index('bundles')).all()).length, 4100)
  await first.close()

  const edited = path.join(repoDir, 'content/bundles/b2345/index.md')
  const st = await stat(edited)
  await writeFile(edited, post('Bundle 23X5'))
  await utimes(edited, st.atime, st.mtime)
  await rm(path.join(repoDir, 'content/bundles/b0008'), { recursive: true })
  await mkdir(path.join(repoDir, 'content/bundles/fresh'))
  await writeFile(path.join(repoDir, 'content/bundles/fresh/index.md'), post('Fresh'))
  await settle()

  const s = await startServer(t, { repoDir })
  t.equal((await read(s, 'bundles', 'b2345'))?.data?.title, 'Bundle 23X5', 'the same-size, same-mtime edit is read')
  t.equal(await read(s, 'bundles', 'b0008'), null, 'the deleted bundle is gone')
  t.equal((await read(s, 'bundles', 'fresh'))?.data?.title, 'Fresh', 'the added bundle is there')
  t.equal((await read(s, 'bundles', 'b4000'))?.data?.title, 'Bundle 4000')
  t.same((await s.services.content.index('bundles')).loadStats, { fromSnapshot: 4098, read: 2 })
  await s.close()
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
  // The same id, another file (its record names the default one).
  await rename(path.join(repoDir, 'content/posts/p0100.md'), path.join(repoDir, 'content/posts/p0100.mdx'))
  await settle()

  const s = await startServer(t, { repoDir })
  const index = await s.services.content.index('posts')
  t.equal((await read(s, 'posts', 'p1234'))?.data?.title, 'Post 12X4', 'the same-size, same-mtime edit is read')
  t.equal(await read(s, 'posts', 'p0007'), null, 'the deleted file is gone')
  t.equal((await read(s, 'posts', 'new'))?.data?.title, 'New one', 'the added file is there')
  t.equal((await read(s, 'posts', 'p0100'))?.data?.title, 'Post 0100', 'the renamed file is read')
  t.same(index.loadStats, { fromSnapshot: 4097, read: 3 })
  // Untouched rows of a snapshot this large are read back from its file when first used (the
  // buffer is released 100 ms after the build: RELEASE_AFTER_MS).
  await new Promise(resolve => setTimeout(resolve, 250))
  t.equal((await read(s, 'posts', 'p2000'))?.data?.title, 'Post 2000', 'a row parsed from the snapshot file')
  await s.close()

  // The snapshot rewritten at close copied the untouched rows from that file.
  const again = await startServer(t, { repoDir })
  const rows = await (await again.services.content.index('posts')).all()
  t.same((await again.services.content.index('posts')).loadStats, { fromSnapshot: 4100, read: 0 })
  t.same([rows[0]?.title, rows[3000]?.title, rows.find(r => r.id === 'p1234')?.title, rows.find(r => r.id === 'new')?.title], ['New one', 'Post 3000', 'Post 12X4', 'New one'])
  await again.close()

  // A record naming its own file (p0100.mdx), edited while down with the same size and mtime.
  const mdx = path.join(repoDir, 'content/posts/p0100.mdx')
  const mst = await stat(mdx)
  await writeFile(mdx, post('Post 01X0'))
  await utimes(mdx, mst.atime, mst.mtime)
  await settle()
  const third = await startServer(t, { repoDir })
  t.equal((await read(third, 'posts', 'p0100'))?.data?.title, 'Post 01X0', 'an edit to a file its record names is read')
  t.same((await third.services.content.index('posts')).loadStats, { fromSnapshot: 4099, read: 1 })
  await third.close()
})
