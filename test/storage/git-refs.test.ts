import t from 'tap'
import { existsSync, openSync, statSync, writeFileSync } from 'node:fs'
import { writeFile, utimes, mkdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { makeRepo, gitIn } from '../helpers/git-repo.js'
import { readRef, updateRef, lockRef, removeStaleLocks, RefConflictError, RefLockedError, type SpareFile } from '../../lib/storage/git-refs.js'

const REF = 'refs/cms/history'

/** A repository with two commits; returns its git dir and their ids. */
const git = (cwd: string, ...args: string[]): string => gitIn(cwd, args)

async function repo (t: { testdir: () => string }): Promise<{ dir: string, gitDir: string, a: string, b: string }> {
  const { dir, gitDir } = makeRepo(t)
  const a = git(dir, 'rev-parse', 'HEAD')
  git(dir, 'commit', '-q', '--allow-empty', '-m', 'second')
  const b = git(dir, 'rev-parse', 'HEAD')
  return { dir, gitDir, a, b }
}

t.test('creates, reads and moves a ref; git sees the same value', async t => {
  const { dir, gitDir, a, b } = await repo(t)
  t.equal(await readRef(gitDir, REF), null)
  await updateRef(gitDir, REF, a, null)
  t.equal(await readRef(gitDir, REF), a)
  t.equal(git(dir, 'rev-parse', REF), a)
  await updateRef(gitDir, REF, b, a)
  t.equal(git(dir, 'rev-parse', REF), b)
  t.equal(await readFile(path.join(gitDir, REF), 'utf8'), `${b}\n`)
  t.notOk(existsSync(path.join(gitDir, `${REF}.lock`)))
})

t.test('compare-and-swap: a stale expected value is refused and changes nothing', async t => {
  const { dir, gitDir, a, b } = await repo(t)
  await updateRef(gitDir, REF, a, null)
  const err = await updateRef(gitDir, REF, b, b).catch((e: unknown) => e)
  t.ok(err instanceof RefConflictError)
  t.match(err, { expected: b, actual: a })
  t.equal(git(dir, 'rev-parse', REF), a)
  t.notOk(existsSync(path.join(gitDir, `${REF}.lock`)), 'lock removed after the failure')
  await t.rejects(updateRef(gitDir, REF, b, null), RefConflictError, 'creating an existing ref is a conflict too')
  t.equal(git(dir, 'rev-parse', REF), a)
  await t.rejects(updateRef(gitDir, 'refs/cms/other', b, a), RefConflictError, 'expecting a value of a missing ref')
  t.equal(await readRef(gitDir, 'refs/cms/other'), null)
})

t.test('a lock held by another process makes the update wait, then give up', async t => {
  const { dir, gitDir, a, b } = await repo(t)
  await updateRef(gitDir, REF, a, null)
  const lock = path.join(gitDir, `${REF}.lock`)
  await writeFile(lock, 'someone else\n')
  const started = Date.now()
  await t.rejects(updateRef(gitDir, REF, b, a), RefLockedError)
  t.ok(Date.now() - started >= 1500, 'it retried for a while first')
  t.equal(git(dir, 'rev-parse', REF), a, 'ref unchanged')
  t.equal(await readFile(lock, 'utf8'), 'someone else\n', 'the foreign lock is left alone')

  // Released shortly: the waiting update goes through.
  setTimeout(() => { void import('node:fs/promises').then(async fs => await fs.rm(lock)) }, 100)
  await updateRef(gitDir, REF, b, a)
  t.equal(git(dir, 'rev-parse', REF), b)
})

t.test('refs that live only in packed-refs are read and updated', async t => {
  const { dir, gitDir, a, b } = await repo(t)
  await updateRef(gitDir, REF, a, null)
  git(dir, 'pack-refs', '--all')
  t.notOk(existsSync(path.join(gitDir, REF)), 'no loose ref after pack-refs')
  t.equal(await readRef(gitDir, REF), a)
  await t.rejects(updateRef(gitDir, REF, b, b), RefConflictError, 'CAS compares with the packed value')
  await updateRef(gitDir, REF, b, a)
  t.equal(git(dir, 'rev-parse', REF), b)
  t.equal(git(dir, 'fsck', '--no-progress'), '')
})

t.test('invalid ref names and object ids are refused before touching the disk', async t => {
  const { gitDir, a } = await repo(t)
  for (const bad of ['refs/cms/../../config', 'HEAD', 'refs/cms/x.lock', 'refs/cms/-x/../y', 'refs/cms/a b', 'refs/cms/.hidden']) {
    await t.rejects(updateRef(gitDir, bad, a, null), /Invalid ref name/, bad)
  }
  await t.rejects(updateRef(gitDir, REF, 'not-an-oid', null), /Invalid object id/)
  t.equal(await readRef(gitDir, REF), null)
})

t.test('removeStaleLocks removes old locks under refs/cms only', async t => {
  const { gitDir } = await repo(t)
  await mkdir(path.join(gitDir, 'refs/cms/drafts'), { recursive: true })
  const old = path.join(gitDir, 'refs/cms/drafts/alice.lock')
  const fresh = path.join(gitDir, 'refs/cms/history.lock')
  const foreign = path.join(gitDir, 'refs/heads/main.lock')
  for (const f of [old, fresh, foreign]) await writeFile(f, '')
  const past = new Date(Date.now() - 60_000)
  await utimes(old, past, past)
  await utimes(foreign, past, past)
  t.same(await removeStaleLocks(gitDir), ['refs/cms/drafts/alice.lock'])
  t.notOk(existsSync(old))
  t.ok(existsSync(fresh), 'a young lock may belong to a running git command')
  t.ok(existsSync(foreign), 'outside our namespace')
  t.same(await removeStaleLocks(path.join(gitDir, 'nowhere')), [], 'a missing namespace is fine')
})

t.test('a lock made from a spare inode: exclusive like a created one, written, and the spare name dropped', async t => {
  const { dir, gitDir, a, b } = await repo(t)
  await updateRef(gitDir, REF, a, null)
  const spareDir = path.join(dir, 'spares')
  await mkdir(spareDir)
  const spareOf = (name: string, content: string): SpareFile => {
    const file = path.join(spareDir, name)
    writeFileSync(file, content)
    return { file, fd: openSync(file, 'r+') }
  }
  // Taken from a spare holding a longer old content: the lock holds exactly the new value.
  const lock = await lockRef(gitDir, REF, b, () => spareOf('s1', 'x'.repeat(100)))
  t.equal(await readFile(path.join(gitDir, `${REF}.lock`), 'utf8'), `${b}\n`)
  t.notOk(existsSync(path.join(spareDir, 's1')), 'the spare name is gone: the lock is its only name')
  await lock.sync()
  await lock.commit(a)
  lock.release()
  t.equal(git(dir, 'rev-parse', REF), b, 'git reads the ref')
  t.equal(statSync(path.join(gitDir, REF)).nlink, 1)

  // Held by someone else: the spare is not linked over it; the update waits and gives up as before.
  const held = path.join(gitDir, `${REF}.lock`)
  await writeFile(held, 'someone else\n')
  await t.rejects(lockRef(gitDir, REF, a, () => spareOf('s2', 'y')), RefLockedError)
  t.equal(await readFile(held, 'utf8'), 'someone else\n', 'the foreign lock is untouched')
  t.notOk(existsSync(path.join(spareDir, 's2')), 'the spare that could not become the lock is dropped')
  t.equal(git(dir, 'rev-parse', REF), b)
})
