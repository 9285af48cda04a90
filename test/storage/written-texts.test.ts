import t from 'tap'
import type { Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { lstatSync } from 'node:fs'
import { mkdtemp, open, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { WrittenTexts } from '../../lib/storage/written-texts.js'
import { signatureOf } from '../../lib/storage/file-signature.js'

// The text a save wrote is kept with its file's signature; the next save takes it after one lstat
// (issue 18, eleventh pass). These tests keep a text that differs from the file's bytes on purpose:
// what comes back while the file is unchanged is the kept text (nothing read), and any change to the
// file, even one keeping its size and mtime, makes it come back undefined.

async function folder (t: Test): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'written-texts-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  return dir
}

const sigOf = (file: string): string => signatureOf(lstatSync(file))
/** Sets a file's mtime back to the exact nanosecond (`touch -d @<s>.<ns>`). */
function setMtimeNs (file: string, mtimeNs: bigint): void {
  const ns = mtimeNs % 1_000_000_000n
  execFileSync('touch', ['-m', '-d', `@${mtimeNs / 1_000_000_000n}.${String(ns).padStart(9, '0')}`, file])
}
const tick = async (): Promise<void> => { await new Promise(resolve => setTimeout(resolve, 30)) }

t.test('served without a read while the file is unchanged; an edit keeping size and mtime is noticed', async t => {
  const dir = await folder(t)
  const file = path.join(dir, 'a.md')
  await writeFile(file, '---\ntitle: A\n---\nBody one\n')
  const sig = sigOf(file)
  const texts = new WrittenTexts()
  texts.remember(file, sig, 'KEPT')
  t.equal(texts.textIfUnchanged(file, sig), 'KEPT', 'the kept text, not the file\'s bytes')
  t.equal(texts.textIfUnchanged(file, sig), 'KEPT', 'again')
  t.equal(texts.textIfUnchanged(path.join(dir, 'other.md'), sig), undefined, 'another file')

  // An outside edit in place: same size, same inode, the mtime set back to what it was.
  const before = lstatSync(file)
  const mtimeNs = lstatSync(file, { bigint: true }).mtimeNs
  await tick()
  const fh = await open(file, 'r+')
  await fh.write('Body two\n', '---\ntitle: A\n---\n'.length)
  await fh.close()
  setMtimeNs(file, mtimeNs)
  const after = lstatSync(file)
  t.equal(after.size, before.size, 'same size')
  t.equal(after.mtimeMs, before.mtimeMs, 'same mtime')
  t.equal(after.ino, before.ino, 'same inode')
  t.not(signatureOf(after), sig, 'the ctime moved')
  t.equal(texts.textIfUnchanged(file, sig), undefined, 'the edit is noticed')
  t.equal(texts.size, 0, 'and the text forgotten')
  t.equal(await readFile(file, 'utf8'), '---\ntitle: A\n---\nBody two\n')
})

t.test('a held signature other than the kept one, a link, a missing file: never served', async t => {
  const dir = await folder(t)
  const file = path.join(dir, 'a.md')
  const target = path.join(dir, 'target.md')
  await writeFile(file, 'x')
  await writeFile(target, 'x')
  const texts = new WrittenTexts()
  texts.remember(file, sigOf(file), 'KEPT')
  t.equal(texts.textIfUnchanged(file, 'other-signature'), undefined, 'the row holds another signature')
  t.equal(texts.size, 0)

  // The file replaced by a link to a file with its very signature (stat follows it; lstat does not).
  texts.remember(target, sigOf(target), 'KEPT')
  const link = path.join(dir, 'link.md')
  await symlink(target, link)
  t.equal(texts.textIfUnchanged(target, sigOf(target)), 'KEPT')
  texts.remember(link, sigOf(target), 'KEPT')
  t.equal(texts.textIfUnchanged(link, sigOf(target)), undefined, 'a link is never served')

  const fileSig = sigOf(file)
  texts.remember(file, fileSig, 'KEPT')
  await rm(file)
  t.equal(texts.textIfUnchanged(file, fileSig), undefined, 'missing')
  texts.forget('nothing')
  t.equal(texts.size, 1, 'the target\'s text is still kept')
  texts.forget(target)
  t.equal(texts.chars, 0)
})

t.test('bounded by count and by total length, least recently used first', async t => {
  const dir = await folder(t)
  const files: string[] = []
  for (let i = 0; i < 4; i++) {
    files.push(path.join(dir, `e${i}.md`))
    await writeFile(files[i] as string, `entry ${i}`)
  }
  const texts = new WrittenTexts(3, 25)
  for (let i = 0; i < 3; i++) texts.remember(files[i] as string, sigOf(files[i] as string), `text ${i}`)
  t.equal(texts.size, 3)
  t.equal(texts.chars, 18)
  // e0 used: e1 is now the oldest.
  t.equal(texts.textIfUnchanged(files[0] as string, sigOf(files[0] as string)), 'text 0')
  texts.remember(files[3] as string, sigOf(files[3] as string), 'text 3')
  t.equal(texts.size, 3, 'at most 3')
  t.equal(texts.textIfUnchanged(files[1] as string, sigOf(files[1] as string)), undefined, 'the least recently used went')
  t.equal(texts.textIfUnchanged(files[0] as string, sigOf(files[0] as string)), 'text 0')
  // 25 characters at most: a 20-character text pushes out the older ones.
  texts.remember(files[2] as string, sigOf(files[2] as string), 'x'.repeat(20))
  t.ok(texts.chars <= 25, `total ${texts.chars}`)
  t.equal(texts.textIfUnchanged(files[2] as string, sigOf(files[2] as string)), 'x'.repeat(20))
  texts.remember(files[3] as string, sigOf(files[3] as string), 'y'.repeat(26))
  t.equal(texts.textIfUnchanged(files[3] as string, sigOf(files[3] as string)), undefined, 'a text over the bound is not kept')
  t.ok(texts.chars <= 25)
})
