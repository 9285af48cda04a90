import t from 'tap'
import { readFile, readdir } from 'node:fs/promises'
import { chmodSync, lstatSync, statSync, symlinkSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { writeFileAtomic, prepareFileAtomic, TEMP_PREFIX } from '../../lib/storage/atomic-write.js'

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

t.test('a write over a link or a FIFO replaces the name: the link target is untouched, nothing blocks', async t => {
  const dir = t.testdir({ 'target.md': 'target\n' })
  symlinkSync(path.join(dir, 'target.md'), path.join(dir, 'link.md'))
  await writeFileAtomic(path.join(dir, 'link.md'), 'new\n')
  t.equal(await readFile(path.join(dir, 'link.md'), 'utf8'), 'new\n')
  t.notOk(lstatSync(path.join(dir, 'link.md')).isSymbolicLink())
  t.equal(await readFile(path.join(dir, 'target.md'), 'utf8'), 'target\n', 'the file the link pointed to is untouched')

  execFileSync('mkfifo', [path.join(dir, 'pipe.md')])
  await writeFileAtomic(path.join(dir, 'pipe.md'), 'p\n')
  t.equal(await readFile(path.join(dir, 'pipe.md'), 'utf8'), 'p\n', 'the FIFO was replaced without waiting for a writer')
  t.same(await leftovers(dir), [])
})

t.test('a replaced file keeps its mode; a new one gets 0644 less the umask', async t => {
  const dir = t.testdir({ 'script.sh': 'old' })
  chmodSync(path.join(dir, 'script.sh'), 0o750)
  await writeFileAtomic(path.join(dir, 'script.sh'), 'new')
  t.equal(statSync(path.join(dir, 'script.sh')).mode & 0o777, 0o750)
  await writeFileAtomic(path.join(dir, 'new.md'), 'x')
  t.equal(statSync(path.join(dir, 'new.md')).mode & 0o777, 0o644 & ~process.umask())
})
