import t from 'tap'
import { existsSync, linkSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { makeRepo, gitIn } from '../helpers/git-repo.js'
import { PackStore } from '../../lib/storage/pack-store.js'
import { HistoryStore } from '../../lib/storage/history-store.js'
import { InodePool, openSpare } from '../../lib/storage/inode-pool.js'
import { TEMP_PREFIX } from '../../lib/storage/atomic-write.js'

const sleep = async (ms: number): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }
const spares = (gitDir: string): string[] => { try { return readdirSync(path.join(gitDir, 'cms', 'spares')) } catch { return [] } }

t.test('a replaced entry file is not kept as a spare: the link would change its ctime, part of its signature', async t => {
  const { dir, gitDir } = makeRepo(t)
  const history = new HistoryStore({ gitDir, packs: new PackStore(gitDir) })
  const content = path.join(dir, 'content')
  mkdirSync(content, { recursive: true })
  const save = async (name: string, text: string): Promise<void> => { await history.append([], [{ path: path.join(content, name), data: text }]) }
  await save('a.md', 'first a, a long first version of the file\n')
  await save('b.md', 'first b\n')
  const b = statSync(path.join(content, 'b.md'))
  await save('a.md', 'second a\n')
  t.equal(readFileSync(path.join(content, 'a.md'), 'utf8'), 'second a\n')
  t.same(spares(gitDir), [], 'no spare taken from an entry file')
  await sleep(250)
  await save('a.md', 'third a\n')
  t.equal(readFileSync(path.join(content, 'a.md'), 'utf8'), 'third a\n')
  t.same(spares(gitDir), [])
  const after = statSync(path.join(content, 'b.md'))
  t.same([after.ino, after.ctimeMs, after.mtimeMs], [b.ino, b.ctimeMs, b.mtimeMs], 'an entry not saved keeps its signature')
  t.same(readdirSync(content).filter(f => f.startsWith(TEMP_PREFIX)), [])
})

t.test('a spare linked from elsewhere, a link or of another mode is never written into', async t => {
  const { dir, gitDir } = makeRepo(t)
  const identity = { mode: 0o644, uid: process.getuid?.() ?? 0 }
  const spareDir = path.join(gitDir, 'cms', 'spares')
  mkdirSync(spareDir, { recursive: true })
  const outside = path.join(dir, 'outside.txt')
  writeFileSync(outside, 'precious\n', { mode: 0o644 })
  linkSync(outside, path.join(spareDir, 'linked'))
  t.equal(openSpare({ file: path.join(spareDir, 'linked'), identity }), null, 'two names: refused')
  t.equal(readFileSync(outside, 'utf8'), 'precious\n')
  t.equal(statSync(outside).nlink, 1, 'and the spare name removed')
  symlinkSync(outside, path.join(spareDir, 'symlink'))
  t.equal(openSpare({ file: path.join(spareDir, 'symlink'), identity }), null, 'a symbolic link: refused')
  writeFileSync(path.join(spareDir, 'exec'), 'x', { mode: 0o755 })
  t.equal(openSpare({ file: path.join(spareDir, 'exec'), identity }), null, 'another mode: refused')
  t.same(readdirSync(spareDir), [])
  t.equal(readFileSync(outside, 'utf8'), 'precious\n')

  // Adopted at start-up: a killed process's spares are reused, not leaked.
  writeFileSync(path.join(spareDir, 'left'), 'old\n', { mode: 0o644 })
  const pool = new InodePool(gitDir)
  await pool.adopt()
  t.equal(pool.take(dir, Date.now()), null, 'nothing is handed out before the pool knows what a new file looks like')
  pool.learn(identity)
  t.same(pool.take(dir, Date.now()), { file: path.join(spareDir, 'left'), identity }, 'then to a folder a spare can be linked into')
  t.same(readdirSync(dir).filter(f => f.startsWith(TEMP_PREFIX)), [], 'the probe link is gone')
  t.equal(statSync(path.join(spareDir, 'left')).nlink, 1, 'and the spare has its one name again')
})

t.test('the ref files a group commit replaces become its later ref locks: no inode is allocated for them', async t => {
  const { dir, gitDir } = makeRepo(t)
  const history = new HistoryStore({ gitDir, packs: new PackStore(gitDir) })
  const content = path.join(dir, 'content')
  mkdirSync(content, { recursive: true })
  const save = async (i: number): Promise<void> => {
    await history.append([{ collection: 'notes', id: `e${i % 3}`, snapshot: { data: { i }, action: 'save', editor: { id: 'x', name: 'X' }, revision: i } }],
      [{ path: path.join(content, `e${i % 3}.md`), data: `version ${i}\n` }])
  }
  for (let i = 0; i < 4; i++) await save(i)
  const kept = spares(gitDir)
  t.ok(kept.length >= 2, `replaced ref files kept: ${kept.length}`)
  await sleep(250)
  const inodes = new Set(kept.map(name => statSync(path.join(gitDir, 'cms', 'spares', name)).ino))
  await save(4)
  const ref = path.join(gitDir, 'refs', 'cms', 'history')
  const reused = statSync(ref)
  t.ok(inodes.has(reused.ino), 'the history ref file is a former ref file: its lock was a spare')
  t.equal(reused.nlink, 1, 'with one name (the spare name was dropped)')
  t.equal(gitIn(dir, ['rev-parse', 'refs/cms/history']), readFileSync(ref, 'utf8').trim(), 'git reads it')
  t.equal(gitIn(dir, ['rev-list', '--count', 'refs/cms/history']), '5')
  t.notOk(existsSync(`${ref}.lock`))
  t.equal(gitIn(dir, ['fsck', '--no-progress', '--strict', '--no-dangling']), '')
})

t.test('entry files take spares only beyond the ones kept for ref locks; adopted spares are reused', async t => {
  const { dir, gitDir } = makeRepo(t)
  const content = path.join(dir, 'content')
  mkdirSync(content, { recursive: true })
  // A previous process left 40 spares (plain files of our mode, one name each).
  const pool = path.join(gitDir, 'cms', 'spares')
  mkdirSync(pool, { recursive: true })
  writeFileSync(path.join(content, 'probe'), 'x')
  const mode = statSync(path.join(content, 'probe')).mode
  for (let i = 0; i < 40; i++) writeFileSync(path.join(pool, `old-${i}`), 'old spare content that is longer than the new one\n', { mode })
  const adopted = new Set(readdirSync(pool).map(name => statSync(path.join(pool, name)).ino))
  const packs = new PackStore(gitDir)
  await packs.sweepTemporary()
  const history = new HistoryStore({ gitDir, packs })
  const reusedFor: number[] = []
  for (let i = 0; i < 12; i++) {
    await history.append([{ collection: 'notes', id: `e${i}`, snapshot: { data: { i }, action: 'save', editor: { id: 'x', name: 'X' }, revision: i } }],
      [{ path: path.join(content, `e${i}.md`), data: `v${i}\n` }])
    if (adopted.has(statSync(path.join(content, `e${i}.md`)).ino)) reusedFor.push(i)
    t.equal(readFileSync(path.join(content, `e${i}.md`), 'utf8'), `v${i}\n`, 'exactly the new content (the old one truncated)')
  }
  t.ok(reusedFor.length >= 4, `entry files written into adopted spares: ${reusedFor.length}`)
  t.ok(spares(gitDir).length >= 32, `spares left for the ref locks: ${spares(gitDir).length}`)
  t.same(readdirSync(content).filter(f => f.startsWith(TEMP_PREFIX)), [])
})

t.test('a retired inode is handed out only once the rename that retired it is durable, and never when its folder fsync failed', async t => {
  const { dir, gitDir } = makeRepo(t)
  const identity = { mode: 0o644, uid: process.getuid?.() ?? 0 }
  const pool = new InodePool(gitDir)
  pool.learn(identity)
  const file = path.join(dir, 'entry.md')
  writeFileSync(file, 'old\n', { mode: 0o644 })
  const spare = pool.retire(file)
  t.ok(spare !== null, 'linked into the pool')
  writeFileSync(path.join(dir, 'new.md'), 'new\n')
  const { renameSync } = await import('node:fs')
  renameSync(path.join(dir, 'new.md'), file)
  t.equal(pool.take(dir, Date.now() + 60_000), null, 'not before its folder is fsynced')
  const now = Date.now()
  pool.settle([spare], true, now)
  t.equal(pool.take(dir, now + 100), null, 'nor right after')
  t.same(pool.take(dir, now + 300), { file: spare!.file, identity }, 'then it is reused')

  writeFileSync(file, 'newer\n', { mode: 0o644 })
  const second = pool.retire(file)
  pool.settle([second], false, Date.now())
  t.equal(pool.take(dir, Date.now() + 60_000), null, 'a spare whose rename may not be durable is never handed out')

  writeFileSync(path.join(dir, 'big.md'), 'x'.repeat(300 * 1024))
  t.equal(pool.retire(path.join(dir, 'big.md')), null, 'a large file is freed as usual, never kept')
  t.equal(pool.retire(path.join(dir, 'missing.md')), null, 'a new entry replaces nothing')
})
