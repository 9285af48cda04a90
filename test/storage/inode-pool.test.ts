import t from 'tap'
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { makeRepo, gitIn } from '../helpers/git-repo.js'
import { PackStore } from '../../lib/storage/pack-store.js'
import { HistoryStore } from '../../lib/storage/history-store.js'
import { InodePool, openSpare } from '../../lib/storage/inode-pool.js'
import { TEMP_PREFIX } from '../../lib/storage/atomic-write.js'

const sleep = async (ms: number): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }
const spares = (gitDir: string): string[] => { try { return readdirSync(path.join(gitDir, 'cms', 'spares')) } catch { return [] } }

t.test('an entry file keeps a name in the pool from before it is the entry: a save changes no other entry\'s signature, and the replaced file is kept, not freed', async t => {
  const { dir, gitDir } = makeRepo(t)
  const history = new HistoryStore({ gitDir, packs: new PackStore(gitDir) })
  const content = path.join(dir, 'content')
  mkdirSync(content, { recursive: true })
  const save = async (name: string, text: string): Promise<void> => { await history.append([], [{ path: path.join(content, name), data: text }]) }
  await save('a.md', 'first a, a long first version of the file\n')
  await save('b.md', 'first b\n')
  const a1 = statSync(path.join(content, 'a.md'))
  const b = statSync(path.join(content, 'b.md'))
  t.equal(a1.nlink, 2, 'the entry file has its pool name too')
  const inPool = (ino: number): string[] => spares(gitDir).filter(n => statSync(path.join(gitDir, 'cms', 'spares', n)).ino === ino)
  t.equal(inPool(a1.ino).length, 1)
  await save('a.md', 'second a\n')
  t.equal(readFileSync(path.join(content, 'a.md'), 'utf8'), 'second a\n')
  const kept = inPool(a1.ino)
  t.equal(kept.length, 1, 'the replaced file was not freed: it is a spare now')
  t.equal(statSync(path.join(gitDir, 'cms', 'spares', kept[0]!)).nlink, 1)
  await sleep(250)
  await save('a.md', 'third a\n')
  t.equal(readFileSync(path.join(content, 'a.md'), 'utf8'), 'third a\n')
  const after = statSync(path.join(content, 'b.md'))
  t.same([after.ino, after.ctimeMs, after.mtimeMs], [b.ino, b.ctimeMs, b.mtimeMs], 'an entry not saved keeps its signature')
  t.same(readdirSync(content).filter(f => f.startsWith(TEMP_PREFIX)), [])
})

t.test('saves reuse the inodes of the entry files they replaced (beyond the spares kept for ref locks)', async t => {
  const { dir, gitDir } = makeRepo(t)
  const packs = new PackStore(gitDir)
  const history = new HistoryStore({ gitDir, packs, journalDir: path.join(gitDir, 'cms', 'history-journal'), foldIntervalMs: 3_600_000, foldIdleMs: 3_600_000 })
  t.teardown(async () => { await history.close() })
  const content = path.join(dir, 'content')
  mkdirSync(content, { recursive: true })
  const names = Array.from({ length: 48 }, (_, i) => `e${i}.md`)
  const saveAll = async (round: number): Promise<void> => {
    for (const name of names) await history.append([], [{ path: path.join(content, name), data: `${name} round ${round}\n` }])
  }
  await saveAll(1)
  const first = new Set(names.map(n => statSync(path.join(content, n)).ino))
  await saveAll(2)
  const second = names.map(n => statSync(path.join(content, n)))
  t.ok(second.every(st => st.nlink === 2), 'each entry file with its pool name')
  await sleep(250)
  await saveAll(3)
  const third = names.map(n => statSync(path.join(content, n)).ino)
  const reused = third.filter(ino => first.has(ino)).length
  t.ok(reused >= names.length - 32, `the third round wrote into the files the second replaced (${reused} of ${names.length})`)
  for (const name of names) t.equal(readFileSync(path.join(content, name), 'utf8'), `${name} round 3\n`)
  t.same(readdirSync(content).filter(f => f.startsWith(TEMP_PREFIX)), [])
})

t.test('a set-group-ID folder gets its entry files made in it, as before (a file made in the pool would not get the folder\'s group)', async t => {
  const { dir, gitDir } = makeRepo(t)
  const history = new HistoryStore({ gitDir, packs: new PackStore(gitDir) })
  const content = path.join(dir, 'shared')
  mkdirSync(content, { recursive: true })
  chmodSync(content, 0o2775)
  for (const text of ['one\n', 'two\n']) await history.append([], [{ path: path.join(content, 'a.md'), data: text }])
  const st = statSync(path.join(content, 'a.md'))
  t.equal(st.nlink, 1, 'no pool name')
  t.equal(st.gid, statSync(content).gid)
  t.equal(readFileSync(path.join(content, 'a.md'), 'utf8'), 'two\n')
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
  const linkedBefore = statSync(outside)
  t.equal(openSpare({ file: path.join(spareDir, 'linked'), identity }), null, 'two names: refused')
  t.equal(readFileSync(outside, 'utf8'), 'precious\n')
  const linkedAfter = statSync(outside)
  t.same([linkedAfter.nlink, linkedAfter.ctimeMs], [2, linkedBefore.ctimeMs], 'and its pool name left: removing it would change the other name\'s ctime')
  symlinkSync(outside, path.join(spareDir, 'symlink'))
  t.equal(openSpare({ file: path.join(spareDir, 'symlink'), identity }), null, 'a symbolic link: refused')
  writeFileSync(path.join(spareDir, 'exec'), 'x', { mode: 0o755 })
  t.equal(openSpare({ file: path.join(spareDir, 'exec'), identity }), null, 'another mode: refused')
  t.same(readdirSync(spareDir), ['linked'])
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

t.test('a start adopts the first few hundred spares at once and the rest between turns of the event loop', async t => {
  const { dir, gitDir } = makeRepo(t)
  const spareDir = path.join(gitDir, 'cms', 'spares')
  mkdirSync(spareDir, { recursive: true })
  for (let i = 0; i < 600; i++) writeFileSync(path.join(spareDir, `left-${i}`), 'old\n', { mode: 0o644 })
  const pool = new InodePool(gitDir)
  pool.learn({ mode: 0o644, uid: process.getuid?.() ?? 0 })
  let turned = false
  setImmediate(() => { turned = true })
  const adopted = pool.adopt()
  t.ok(pool.take(dir, Date.now()) !== null, 'spares of the first batch are there before the adoption finished')
  await adopted
  t.ok(turned, 'the adoption let the event loop turn')
  let handed = 1
  while (pool.take(dir, Date.now()) !== null) handed++
  t.equal(handed, 600, 'every spare adopted in the end')
})
