import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { makeRepo, gitIn } from '../helpers/git-repo.js'
import { PackStore } from '../../lib/storage/pack-store.js'
import { HistoryStore, MAX_SNAPSHOTS, type Snapshot } from '../../lib/storage/history-store.js'
import { RefTreeStore, type DocCodec, type TreeUpdate } from '../../lib/storage/ref-tree-store.js'
import type { RefSource } from '../../lib/storage/group-commit.js'
import type { ObjectBatch } from '../../lib/storage/object-batch.js'
import { readRef, removeStaleLocks } from '../../lib/storage/git-refs.js'
import { TEMP_PREFIX } from '../../lib/storage/atomic-write.js'

// The pipeline: group N+1 is built on group N's commit while N is still being written, and lands
// only if N did (its compare-and-swap expects N's commit).

type Doc = { n: number }
const numbers: DocCodec<Doc> = { decode: (text) => JSON.parse(text) as Doc, encode: (doc) => `${JSON.stringify(doc)}\n` }
const bump = (collection: string, id: string): TreeUpdate<Doc> => ({ type: 'update', collection, id, update: (cur) => ({ n: (cur?.n ?? 0) + 1 }) })
const snapshot = (n: number): Omit<Snapshot, 'ts'> => ({ data: { n }, action: 'save', editor: { id: 'ed', name: 'Ed' }, revision: n })
const sleep = async (ms: number): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }
const leftovers = (dir: string): string[] => readdirSync(dir).filter(f => f.startsWith(TEMP_PREFIX))

/** A ref store that records the head each build got and runs a hook inside a chosen build. */
class Probe<T> implements RefSource {
  readonly heads: Array<string | null> = []
  readonly commits: Array<string | null> = []
  readonly hooks = new Map<number, () => Promise<void> | void>()
  constructor (readonly inner: RefTreeStore<T>) {}
  get ref (): string { return this.inner.ref }
  async build (head: string | null, jobs: ReadonlyArray<ReadonlyArray<TreeUpdate<T>>>, batch: ObjectBatch): Promise<{ commit: string | null, failed: Map<number, unknown> }> {
    const n = this.heads.length
    this.heads.push(head)
    const built = await this.inner.build(head, jobs, batch)
    this.commits.push(built.commit)
    await this.hooks.get(n)?.()
    return built
  }
}

t.test('a save submitted while a group is written rides in the next group, built on the commit in flight before that one moved its ref; files land in order', async t => {
  const { dir, gitDir } = makeRepo(t)
  const packs = new PackStore(gitDir)
  const ref = 'refs/cms/test'
  const other = new Probe(new RefTreeStore({ gitDir, ref: 'refs/cms/other', codec: numbers, message: 'other', packs }))
  const probe = new Probe(new RefTreeStore({ gitDir, ref, codec: numbers, message: 'test', packs }))
  const content = path.join(dir, 'content')
  mkdirSync(content, { recursive: true })
  const file = path.join(content, 'same.json')
  const lock = path.join(gitDir, 'refs', 'cms', 'test.lock')
  const later: Array<Promise<void>> = []
  // Group 0 (another ref) is in flight while group 1 forms, so group 1 takes its lock after its pack is
  // durable; another process holds that lock a moment, so group 1 is still waiting to land while group
  // 2 (queued during group 1's build) is built.
  other.hooks.set(0, () => {
    later.push(packs.group.submit(probe, [bump('c', 'same')], [{ path: file, data: 'first\n' }]))
    // Two queued saves: the next group forms before group 0 landed.
    later.push(packs.group.submit(other, [bump('c', 'y')]))
  })
  probe.hooks.set(0, () => {
    writeFileSync(lock, 'held by another process\n')
    setTimeout(() => { rmSync(lock, { force: true }) }, 300)
    later.push(packs.group.submit(probe, [bump('c', 'same')], [{ path: file, data: 'second\n' }]))
    later.push(packs.group.submit(probe, [bump('c', 'new')], [{ path: path.join(content, 'new.json'), data: 'new\n' }]))
  })
  let onDisk: string | null | undefined
  probe.hooks.set(1, async () => { onDisk = await readRef(gitDir, ref) })
  await packs.group.submit(other, [bump('c', 'x')])
  await Promise.all(later)
  t.equal(probe.heads.length, 2, 'two groups on the ref')
  t.equal(probe.heads[1], probe.commits[0], 'the second group was built on the first group\'s commit')
  t.equal(onDisk, null, 'while the first group had not moved the ref yet')
  t.equal(await readRef(gitDir, ref), probe.commits[1], 'both landed, in order')
  t.same((await probe.inner.list()).map(d => `${d.id}=${d.doc.n}`), ['new=1', 'same=2'])
  t.equal(readFileSync(file, 'utf8'), 'second\n', 'the later save of the same file is the one left')
  t.equal(readFileSync(path.join(content, 'new.json'), 'utf8'), 'new\n')
  t.equal(gitIn(dir, ['rev-list', '--count', ref]), '2')
  t.same(leftovers(content), [])
  await packs.idle()
  t.equal(gitIn(dir, ['fsck', '--no-progress', '--strict', '--no-dangling']), '')
})

t.test('an outside writer moving the ref while groups are pipelined: the group built on the moved-away commit is rebuilt, nothing is lost', async t => {
  const { dir, gitDir } = makeRepo(t)
  const packs = new PackStore(gitDir)
  const ref = 'refs/cms/test'
  const probe = new Probe(new RefTreeStore({ gitDir, ref, codec: numbers, message: 'ours', packs }))
  // Another instance (its own packs and group commit) on the same ref.
  const theirs = new RefTreeStore({ gitDir, ref, codec: numbers, message: 'theirs', packs: new PackStore(gitDir) })
  const content = path.join(dir, 'content')
  mkdirSync(content, { recursive: true })
  const later: Array<Promise<void>> = []
  // Two saves queued while the first group is written: they form the next group before it landed.
  probe.hooks.set(0, () => {
    later.push(packs.group.submit(probe, [bump('c', 'b')], [{ path: path.join(content, 'b'), data: 'b\n' }]))
    later.push(packs.group.submit(probe, [bump('c', 'b2')]))
  })
  // Inside the second group's build (on the first group's commit): the outside writer lands on top of
  // the first group, so the second group's compare-and-swap must refuse.
  probe.hooks.set(1, async () => { await theirs.update([bump('c', 'outside')]) })
  await packs.group.submit(probe, [bump('c', 'a')], [{ path: path.join(content, 'a'), data: 'a\n' }])
  await Promise.all(later)
  t.equal(probe.heads[1], probe.commits[0], 'the second group was built on the first group\'s commit')
  t.ok(probe.heads.length >= 3, `the second group's job was rebuilt (${probe.heads.length} builds)`)
  t.not(probe.heads.at(-1), probe.commits[0], 'on the ref\'s new value')
  t.same((await probe.inner.list()).map(d => `${d.id}=${d.doc.n}`), ['a=1', 'b=1', 'b2=1', 'outside=1'], 'every update is on the ref')
  t.equal(gitIn(dir, ['rev-list', '--count', ref]), '3', 'ours, theirs, ours again')
  t.same(readdirSync(content).sort(), ['a', 'b'], 'both files placed, no temporary file left')
  await packs.idle()
  t.equal(gitIn(dir, ['fsck', '--no-progress', '--strict', '--no-dangling']), '')
})

t.test('a group that does not land (its ref locked by another process) fails its own jobs; the group built on it is rebuilt and lands', async t => {
  const { dir, gitDir } = makeRepo(t)
  const packs = new PackStore(gitDir)
  const first = new Probe(new RefTreeStore({ gitDir, ref: 'refs/cms/first', codec: numbers, message: 'first', packs }))
  const probe = new Probe(new RefTreeStore({ gitDir, ref: 'refs/cms/test', codec: numbers, message: 'test', packs }))
  const content = path.join(dir, 'content')
  mkdirSync(content, { recursive: true })
  const lock = path.join(gitDir, 'refs', 'cms', 'test.lock')
  const outcome = async (p: Promise<void>): Promise<string> => await p.then(() => 'ok', (err: Error) => err.constructor.name)
  // Group 1 saves on another ref. While it is written, group 2 forms: a save on the probed ref, which
  // takes its lock only after group 1 landed; another process holds that lock for too long, so group 2
  // fails. Group 3 forms while group 2 is written, is built on group 2's commit, and must be rebuilt.
  let second: Promise<string> | null = null
  let third: Promise<string> | null = null
  let fourth: Promise<string> | null = null
  let alongside: Promise<string> | null = null
  first.hooks.set(0, () => {
    second = outcome(packs.group.submit(probe, [bump('c', 'second')], [{ path: path.join(content, 'second'), data: '2\n' }]))
    // Two queued saves: the next group forms before this one landed.
    alongside = outcome(packs.group.submit(first, [bump('c', 'alongside')]))
  })
  probe.hooks.set(0, () => {
    mkdirSync(path.dirname(lock), { recursive: true })
    writeFileSync(lock, 'held by another process\n')
    // Two saves: a group forms before the one in flight landed only when at least two are queued.
    third = outcome(packs.group.submit(probe, [bump('c', 'third')], [{ path: path.join(content, 'third'), data: '3\n' }]))
    fourth = outcome(packs.group.submit(probe, [bump('c', 'fourth')], [{ path: path.join(content, 'fourth'), data: '4\n' }]))
  })
  // Released a while after group 2 gave up (it waits 2 s); group 3 then takes the lock.
  probe.hooks.set(1, () => { setTimeout(() => { rmSync(lock, { force: true }) }, 2600) })
  t.equal(await outcome(packs.group.submit(first, [bump('c', 'first')], [{ path: path.join(content, 'first'), data: '1\n' }])), 'ok', 'the first group landed')
  t.equal(await second, 'StorageUnavailableError', 'the save whose ref stayed locked failed (503)')
  t.equal(await alongside, 'ok', 'the save on another ref in the same group landed')
  t.equal(await third, 'ok', 'the saves built on it were rebuilt and landed')
  t.equal(await fourth, 'ok')
  t.equal(probe.heads[1], probe.commits[0], 'the third group had been built on the second group\'s commit')
  t.equal(probe.heads.at(-1), null, 'and was rebuilt on the ref as it is')
  t.same((await probe.inner.list()).map(d => `${d.id}=${d.doc.n}`), ['fourth=1', 'third=1'], 'only the landed saves are on the ref')
  t.same(readdirSync(content).sort(), ['first', 'fourth', 'third'], 'the failed save\'s file was not placed')
  await packs.idle()
  t.equal(gitIn(dir, ['fsck', '--no-progress', '--strict', '--no-dangling']), '')
})

t.test('a failing update function in one group fails its job only; the group after it lands', async t => {
  const { dir, gitDir } = makeRepo(t)
  const packs = new PackStore(gitDir)
  const probe = new Probe(new RefTreeStore({ gitDir, ref: 'refs/cms/test', codec: numbers, message: 'test', packs }))
  const content = path.join(dir, 'content')
  mkdirSync(content, { recursive: true })
  const later: Array<Promise<void>> = []
  probe.hooks.set(0, () => { later.push(packs.group.submit(probe, [bump('c', 'next')], [{ path: path.join(content, 'next'), data: 'n\n' }])) })
  const results = await Promise.allSettled([
    packs.group.submit(probe, [bump('c', 'good')], [{ path: path.join(content, 'good'), data: 'g\n' }]),
    packs.group.submit(probe, [{ type: 'update', collection: 'c', id: 'bad', update: () => { throw new Error('refused') } }], [{ path: path.join(content, 'bad'), data: 'b\n' }])
  ])
  await Promise.all(later)
  t.same(results.map(r => r.status), ['fulfilled', 'rejected'])
  t.same((await probe.inner.list()).map(d => d.id), ['good', 'next'])
  t.same(readdirSync(content).sort(), ['good', 'next'])
})

t.test('concurrent saves of many entries, several per entry, through pipelined groups: every one on its ref and in its file', async t => {
  const { dir, gitDir } = makeRepo(t)
  const packs = new PackStore(gitDir)
  const history = new HistoryStore({ gitDir, packs })
  const content = path.join(dir, 'content')
  mkdirSync(content, { recursive: true })
  const ENTRIES = 6
  const ROUNDS = 12
  // Eight savers; two of them share each of the first two entries (same-entry saves in flight together).
  const saver = async (w: number): Promise<void> => {
    const id = `e${w % ENTRIES}`
    for (let n = 0; n < ROUNDS; n++) {
      await history.append([{ collection: 'notes', id, snapshot: snapshot(w * 100 + n) }], [{ path: path.join(content, `${id}-${w}`), data: `${n}\n` }])
    }
  }
  await Promise.all(Array.from({ length: 8 }, async (_, w) => { await saver(w) }))
  for (let w = 0; w < 8; w++) t.equal(readFileSync(path.join(content, `e${w % ENTRIES}-${w}`), 'utf8'), `${ROUNDS - 1}\n`)
  let total = 0
  for (let e = 0; e < ENTRIES; e++) {
    const list = await history.list('notes', `e${e}`)
    total += list.length
    const ts = list.map(s => s.ts)
    t.same(ts, [...ts].sort((a, b) => a - b), `e${e}: ts increasing`)
    for (const w of [0, 1, 2, 3, 4, 5, 6, 7].filter(x => x % ENTRIES === e)) {
      t.same(list.filter(s => Math.floor((s.data.n as number) / 100) === w).map(s => (s.data.n as number) % 100), Array.from({ length: ROUNDS }, (_, n) => n), `e${e}: saver ${w}'s snapshots all there, in order`)
    }
  }
  t.equal(total, 8 * ROUNDS)
  t.same(leftovers(content), [])
  await packs.idle()
  t.equal(gitIn(dir, ['fsck', '--no-progress', '--strict', '--no-dangling']), '')
})

const DIST = fileURLToPath(new URL('../../dist/lib/storage/', import.meta.url))

t.test('kill -9 during pipelined groups: every acknowledged save is on the ref and in its file, and git fsck is clean', async t => {
  await killDuringSaves(t, 5)
})

t.test('kill -9 once the ref locks come from spare inodes and replaced files are held open: nothing acknowledged is lost, git reads the ref, a restart saves on', async t => {
  // 60 saves per saver: the replaced ref files have been spares for over 200 ms, so locks are made
  // from them (link + unlink) and every entry rename holds the replaced file open.
  const { dir, gitDir, content } = await killDuringSaves(t, 60)
  const ref = path.join(gitDir, 'refs', 'cms', 'history')
  t.equal(statSync(ref).nlink, 1, 'the ref file has one name')
  // A restart, as the server's (cms.ts): removes the killed process's ref locks (the instance lock
  // proves it gone), adopts its spares (dropping any with two names) and saves on.
  const killedLeft = leftovers(content)
  await removeStaleLocks(gitDir, 'refs/cms/', 0)
  const packs = new PackStore(gitDir)
  await packs.sweepTemporary()
  const history = new HistoryStore({ gitDir, packs })
  await sleep(250)
  for (let i = 0; i < 20; i++) {
    await history.append([{ collection: 'notes', id: `e${i % 8}`, snapshot: { data: { n: -i }, action: 'save', editor: { id: 'x', name: 'X' }, revision: 1 } }],
      [{ path: path.join(content, `e${i % 8}`), data: `after ${i}\n` }])
  }
  for (let w = 0; w < 8; w++) t.equal(readFileSync(path.join(content, `e${w}`), 'utf8'), `after ${w + 8 * (w < 4 ? 2 : 1)}\n`)
  t.same(leftovers(content), killedLeft, 'no temporary file of its own (the server start sweeps those of the killed process)')
  await packs.idle()
  t.equal(gitIn(dir, ['rev-parse', 'refs/cms/history']), readFileSync(ref, 'utf8').trim())
  t.equal(gitIn(dir, ['fsck', '--no-progress', '--strict', '--no-dangling']), '')
})

async function killDuringSaves (t: Test, acks: number): Promise<{ dir: string, gitDir: string, content: string }> {
  const { dir, gitDir } = makeRepo(t)
  const content = path.join(dir, 'content')
  mkdirSync(content, { recursive: true })
  // Eight savers in a child process (the built dist/, as the server runs it) print each save once
  // it resolved; the parent kills the child in the middle of the burst.
  const script = `
    const path = await import('node:path')
    const { HistoryStore } = await import(${JSON.stringify(path.join(DIST, 'history-store.js'))})
    const { PackStore } = await import(${JSON.stringify(path.join(DIST, 'pack-store.js'))})
    const packs = new PackStore(${JSON.stringify(gitDir)})
    await packs.sweepTemporary()
    const history = new HistoryStore({ gitDir: ${JSON.stringify(gitDir)}, packs })
    await Promise.all(Array.from({ length: 8 }, async (_, w) => {
      for (let n = 1; ; n++) {
        await history.append([{ collection: 'notes', id: 'e' + w, snapshot: { data: { n: n - 1 }, action: 'save', editor: { id: 'x', name: 'X' }, revision: n } }],
          [{ path: path.join(${JSON.stringify(content)}, 'e' + w), data: n + '\\n' }])
        process.stdout.write(w + ' ' + n + '\\n')
      }
    }))
  `
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
  const acked = new Array<number>(8).fill(0)
  let out = ''
  await new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      const lines = out.split('\n')
      out = lines.pop() ?? ''
      for (const line of lines) {
        const [w, n] = line.split(' ').map(Number) as [number, number]
        acked[w] = Math.max(acked[w]!, n)
      }
      if (acked.every(n => n >= acks)) child.kill('SIGKILL')
    })
    child.on('exit', () => { resolve() })
  })
  t.ok(acked.every(n => n >= acks), `every saver had saves acknowledged: ${acked.join(',')}`)
  const packs = new PackStore(gitDir)
  await packs.sweepTemporary()
  const history = new HistoryStore({ gitDir, packs })
  for (let w = 0; w < 8; w++) {
    const v = Number(readFileSync(path.join(content, `e${w}`), 'utf8'))
    t.ok(v === acked[w] || v === acked[w]! + 1, `e${w}: file holds ${v}, last acknowledged ${acked[w]}`)
    const states = (await history.list('notes', `e${w}`)).map(s => s.data.n as number)
    // Each save n recorded the state before it (n - 1): all of 0 .. v-1 are on the ref (the newest
    // MAX_SNAPSHOTS of them: older ones are dropped).
    const from = Math.max(0, v - MAX_SNAPSHOTS)
    t.same(states.slice(0, v - from), Array.from({ length: v - from }, (_, i) => from + i), `e${w}: a snapshot for every save up to the file's`)
  }
  t.equal(gitIn(dir, ['fsck', '--no-progress', '--no-dangling']).includes('error'), false)
  return { dir, gitDir, content }
}
