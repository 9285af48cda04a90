import t from 'tap'
import { readFile, readdir } from 'node:fs/promises'
import { closeSync, fstatSync, lstatSync, readSync, statSync, symlinkSync, writeSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { writeFileAtomic, prepareFileAtomic, TEMP_PREFIX, StagedFile, closeInBackground, createFile } from '../../lib/storage/atomic-write.js'

const leftovers = async (dir: string): Promise<string[]> => (await readdir(dir)).filter(f => f.startsWith(TEMP_PREFIX))

t.test('writeFileAtomic replaces a file, creating its directory when needed', async t => {
  const dir = t.testdir({ 'a.md': 'old\n' })
  await writeFileAtomic(path.join(dir, 'a.md'), 'new ü\n')
  t.equal(await readFile(path.join(dir, 'a.md'), 'utf8'), 'new ü\n')
  await writeFileAtomic(path.join(dir, 'sub', 'deeper', 'b.json'), Buffer.from('{}\n'))
  t.equal(await readFile(path.join(dir, 'sub', 'deeper', 'b.json'), 'utf8'), '{}\n')
  const big = 'x'.repeat(3 * 1024 * 1024)
  await writeFileAtomic(path.join(dir, 'big.txt'), big)
  t.equal((await readFile(path.join(dir, 'big.txt'), 'utf8')).length, big.length)
  t.same(await leftovers(dir), [])
})

t.test('a prepared write changes nothing until committed, and nothing when aborted', async t => {
  const dir = t.testdir({ 'a.md': 'old\n' })
  const file = path.join(dir, 'a.md')
  const prepared = await prepareFileAtomic(file, 'new\n')
  t.equal(await readFile(file, 'utf8'), 'old\n', 'not in place yet')
  t.equal((await leftovers(dir)).length, 1, 'the new content waits under a temporary name')
  await prepared.commit()
  t.equal(await readFile(file, 'utf8'), 'new\n')
  t.same(await leftovers(dir), [])
  await t.rejects(prepared.commit(), /already committed/, 'one commit only')

  const aborted = await prepareFileAtomic(file, 'never\n')
  await aborted.abort()
  await aborted.abort()
  t.equal(await readFile(file, 'utf8'), 'new\n', 'aborting leaves the file as it was')
  t.same(await leftovers(dir), [])
  await t.rejects(aborted.commit(), /already committed or aborted/)
})

t.test('a write that cannot happen leaves the target and no temporary file', async t => {
  const dir = t.testdir({ 'a.md': 'old\n', taken: { 'c.md': 'kept\n' } })
  // The rename over a directory fails after the temporary file was written.
  await t.rejects(writeFileAtomic(path.join(dir, 'taken'), 'new\n'))
  t.equal(await readFile(path.join(dir, 'taken', 'c.md'), 'utf8'), 'kept\n')
  t.same(await leftovers(dir), [])
  const prepared = await prepareFileAtomic(path.join(dir, 'taken'), 'new\n')
  await t.rejects(prepared.commit())
  t.same(await leftovers(dir), [], 'a failed commit removes its temporary file')
})

t.test('placeKeepingOld replaces the target and hands back the replaced file, still open, to be freed later', async t => {
  const dir = t.testdir({ 'a.md': 'old\n' })
  const file = path.join(dir, 'a.md')
  const before = statSync(file)
  const staged = await StagedFile.create(file, 'new\n')
  await staged.sync()
  const old = await staged.placeKeepingOld()
  t.not(old, null, 'the replaced file is held open')
  t.equal(await readFile(file, 'utf8'), 'new\n', 'the new content is in place')
  const held = fstatSync(old!)
  t.equal(held.ino, before.ino, 'the descriptor is the replaced inode')
  t.equal(held.nlink, 0, 'which has no name left: closing it frees it')
  const buf = Buffer.alloc(16)
  t.equal(buf.toString('utf8', 0, readSync(old!, buf, 0, 16, 0)), 'old\n')
  closeInBackground([old!])
  t.same(await leftovers(dir), [])

  // A new name: nothing replaced, nothing held.
  const fresh = await StagedFile.create(path.join(dir, 'b.md'), 'b\n')
  await fresh.sync()
  t.equal(await fresh.placeKeepingOld(), null)
  t.equal(await readFile(path.join(dir, 'b.md'), 'utf8'), 'b\n')
})

t.test('placeKeepingOld over a link or a FIFO: the name is replaced, the link target untouched, nothing blocks', async t => {
  const dir = t.testdir({ 'target.md': 'target\n' })
  symlinkSync(path.join(dir, 'target.md'), path.join(dir, 'link.md'))
  const viaLink = await StagedFile.create(path.join(dir, 'link.md'), 'new\n')
  await viaLink.sync()
  t.equal(await viaLink.placeKeepingOld(), null, 'a link is not opened (replaced by a plain rename)')
  t.equal(await readFile(path.join(dir, 'link.md'), 'utf8'), 'new\n')
  t.notOk(lstatSync(path.join(dir, 'link.md')).isSymbolicLink())
  t.equal(await readFile(path.join(dir, 'target.md'), 'utf8'), 'target\n', 'the file the link pointed to is untouched')

  execFileSync('mkfifo', [path.join(dir, 'pipe.md')])
  const overFifo = await StagedFile.create(path.join(dir, 'pipe.md'), 'p\n')
  await overFifo.sync()
  const held = await overFifo.placeKeepingOld()
  if (held !== null) closeInBackground([held])
  t.equal(await readFile(path.join(dir, 'pipe.md'), 'utf8'), 'p\n', 'the FIFO was replaced without waiting for a writer')
  t.same(await leftovers(dir), [])
})

t.test('createFile creates a new file exclusively with its mode, and refuses an existing one', async t => {
  const dir = t.testdir({ 'taken': 'x' })
  const fd = await createFile(path.join(dir, 'new'), 0o640)
  writeSync(fd, 'hello')
  closeSync(fd)
  t.equal(await readFile(path.join(dir, 'new'), 'utf8'), 'hello')
  t.equal(statSync(path.join(dir, 'new')).mode & 0o777, 0o640 & ~process.umask())
  await t.rejects(createFile(path.join(dir, 'taken'), 0o644), { code: 'EEXIST' })
  t.equal(await readFile(path.join(dir, 'taken'), 'utf8'), 'x', 'the existing file is untouched')
  await t.rejects(createFile(path.join(dir, 'missing', 'f'), 0o644), { code: 'ENOENT' })
})
