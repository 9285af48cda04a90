import t, { type Test } from 'tap'
import { cpSync, readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from 'node:fs'
import path from 'node:path'
import { makeRepo, gitIn } from '../helpers/git-repo.js'
import { repoFingerprint } from '../helpers/site.js'
import { PackStore } from '../../lib/storage/pack-store.js'
import { HistoryStore, HISTORY_REF, MAX_SNAPSHOTS, type Snapshot } from '../../lib/storage/history-store.js'
import { shardOf } from '../../lib/storage/ref-tree-store.js'
import { readRef } from '../../lib/storage/git-refs.js'
import { encodeFrame } from '../../lib/storage/journal-frame.js'

const editor = { id: 'alice', name: 'Alice' }
const snap = (n: number): Omit<Snapshot, 'ts'> => ({ data: { n }, action: 'save', editor, revision: n })
/** Folds only when asked (flush, close), so what is on the ref at each step is known. */
const MANUAL = { foldIntervalMs: 3_600_000, foldIdleMs: 3_600_000 }

function setup (t: Test, opts: { manual?: boolean, warn?: (message: string, details: Record<string, unknown>) => void } = {}): { dir: string, gitDir: string, journalDir: string, open: () => HistoryStore } {
  const { dir, gitDir } = makeRepo(t)
  const journalDir = path.join(gitDir, 'cms', 'history-journal')
  const open = (): HistoryStore => {
    const history = new HistoryStore({ gitDir, packs: new PackStore(gitDir), journalDir, ...(opts.manual !== false ? MANUAL : {}), ...(opts.warn !== undefined ? { warn: opts.warn } : {}) })
    return history
  }
  return { dir, gitDir, journalDir, open }
}

/** The entry's document on the ref, read by git itself. */
function onRef (dir: string, collection: string, id: string): Snapshot[] | null {
  try {
    return (JSON.parse(gitIn(dir, ['show', `${HISTORY_REF}:${collection}/${shardOf(id)}/${id}.json`])) as { snapshots: Snapshot[] }).snapshots
  } catch {
    return null
  }
}

/** Bytes of records in the journal's segments (0: nothing left to fold). */
function journalBytes (journalDir: string): number {
  return readdirSync(journalDir).reduce((sum, name) => sum + statSync(path.join(journalDir, name)).size, 0)
}

t.test('a snapshot is listed as soon as append resolves, reaches the ref when folded, and its segment is dropped then', async t => {
  const { dir, gitDir, journalDir, open } = setup(t)
  const history = open()
  await history.open()
  const stored: Snapshot[] = []
  for (let n = 1; n <= 3; n++) stored.push(...await history.append([{ collection: 'posts', id: 'hello', snapshot: snap(n) }]))
  t.ok(stored[1]!.ts > stored[0]!.ts && stored[2]!.ts > stored[1]!.ts, 'ts strictly increasing within one millisecond too')
  t.same(await history.list('posts', 'hello'), stored)
  t.same(await history.find('posts', 'hello', stored[1]!.ts), stored[1])
  t.equal(await readRef(gitDir, HISTORY_REF), null, 'not folded yet: the journal holds them')
  t.ok(journalBytes(journalDir) > 0)
  await history.flush()
  t.same(onRef(dir, 'posts', 'hello'), stored, 'git reads them on the ref after the fold')
  t.equal(journalBytes(journalDir), 0, 'the folded segment is dropped')
  t.same(await history.list('posts', 'hello'), stored, 'listed once, not twice')
  // After the fold the ts still follow the ref's last one.
  const [fourth] = await history.append([{ collection: 'posts', id: 'hello', snapshot: snap(4) }])
  t.ok(fourth!.ts > stored[2]!.ts)
  t.same((await history.list('posts', 'hello')).map(s => s.data.n), [1, 2, 3, 4])
  await history.close()
  t.same(readdirSync(journalDir), [], 'a clean close folds and leaves no segment')
  t.same(onRef(dir, 'posts', 'hello')!.map(s => s.data.n), [1, 2, 3, 4])
  t.equal(gitIn(dir, ['fsck', '--no-progress']).includes('error'), false)
})

t.test('the cap of 50 holds across the ref and the journal', async t => {
  const { dir, open } = setup(t)
  const history = open()
  for (let n = 1; n <= 30; n++) await history.append([{ collection: 'posts', id: 'p', snapshot: snap(n) }])
  await history.flush()
  for (let n = 31; n <= 60; n++) await history.append([{ collection: 'posts', id: 'p', snapshot: snap(n) }])
  const listed = await history.list('posts', 'p')
  t.equal(listed.length, MAX_SNAPSHOTS)
  t.same(listed.map(s => s.data.n), Array.from({ length: 50 }, (_, i) => i + 11), 'the newest 50, newest last')
  await history.close()
  t.same(onRef(dir, 'posts', 'p'), listed, 'the ref holds the same 50 after the fold')
})

t.test('a save\'s file is replaced only once its snapshot is durable in the journal; a new entry\'s file goes alone', async t => {
  const { dir, open } = setup(t)
  const history = open()
  const file = path.join(dir, 'content', 'a.json')
  mkdirSync(path.dirname(file))
  await history.append([], [{ path: file, data: '{"n":1}\n' }])
  t.equal(readFileSync(file, 'utf8'), '{"n":1}\n', 'a new entry: the file alone')
  await history.append([{ collection: 'notes', id: 'a', snapshot: snap(1) }], [{ path: file, data: '{"n":2}\n' }])
  t.equal(readFileSync(file, 'utf8'), '{"n":2}\n')
  // Several saves of one file in flight: they land in call order.
  await Promise.all([3, 4, 5].map(async n => await history.append([{ collection: 'notes', id: 'a', snapshot: snap(n - 1) }], [{ path: file, data: `{"n":${n}}\n` }])))
  t.equal(readFileSync(file, 'utf8'), '{"n":5}\n')
  t.same((await history.list('notes', 'a')).map(s => s.data.n), [1, 2, 3, 4])
  t.same(readdirSync(path.dirname(file)), ['a.json'], 'no temporary file left')
  await history.close()
})

t.test('a crash\'s journal is folded at the next open, idempotently: a segment already folded adds nothing twice', async t => {
  const { dir, gitDir, journalDir, open } = setup(t)
  const first = open()
  for (let n = 1; n <= 3; n++) await first.append([{ collection: 'posts', id: 'a', snapshot: snap(n) }, { collection: 'notes', id: 'b', snapshot: snap(n) }])
  // The kill hits after the fold landed but before its segment was removed: keep a copy to put back.
  const copy = path.join(dir, 'segments-copy')
  cpSync(journalDir, copy, { recursive: true })
  await first.flush()
  cpSync(copy, journalDir, { recursive: true })
  for (let n = 4; n <= 5; n++) await first.append([{ collection: 'posts', id: 'a', snapshot: snap(n) }])
  const expectedA = await first.list('posts', 'a')
  const expectedB = await first.list('notes', 'b')
  const refBefore = await readRef(gitDir, HISTORY_REF)
  t.same(onRef(dir, 'posts', 'a')!.map(s => s.data.n), [1, 2, 3], 'the last two only in the journal')
  // No close: the process is gone. A new one opens the same journal.
  const second = open()
  await second.open()
  t.not(await readRef(gitDir, HISTORY_REF), refBefore, 'the fold at open moved the ref')
  t.same(onRef(dir, 'posts', 'a'), expectedA, 'every snapshot once, in ts order')
  t.same(onRef(dir, 'notes', 'b'), expectedB, 'the refolded segment added nothing twice')
  t.same(await second.list('posts', 'a'), expectedA)
  t.equal(journalBytes(journalDir), 0, 'the segments read at open are dropped once folded')
  const [next] = await second.append([{ collection: 'posts', id: 'a', snapshot: snap(6) }])
  t.ok(next!.ts > expectedA.at(-1)!.ts)
  await second.close()
  t.equal(gitIn(dir, ['fsck', '--no-progress']).includes('error'), false)
})

t.test('appends to a store nobody opened wait for the journal a previous process left; later appends follow them', async t => {
  const { dir, open } = setup(t)
  const first = open()
  const left: Snapshot[] = []
  for (let n = 1; n <= 3; n++) left.push(...await first.append([{ collection: 'posts', id: 'a', snapshot: snap(n) }]))
  // No close: the process is gone. The next one appends at once, without calling open.
  const second = open()
  const [a, b] = await Promise.all([
    second.append([{ collection: 'posts', id: 'a', snapshot: snap(4) }]),
    second.append([{ collection: 'posts', id: 'a', snapshot: snap(5) }])
  ])
  t.ok(a[0]!.ts > left.at(-1)!.ts && b[0]!.ts > a[0]!.ts, 'ts after the journal left, strictly increasing')
  const [c] = await second.append([{ collection: 'posts', id: 'a', snapshot: snap(6) }])
  t.ok(c!.ts > b[0]!.ts)
  t.same((await second.list('posts', 'a')).map(s => s.data.n), [1, 2, 3, 4, 5, 6])
  await second.close()
  t.same(onRef(dir, 'posts', 'a')!.map(s => s.data.n), [1, 2, 3, 4, 5, 6])
})

t.test('the idle fold comes once appends pause for the idle time, not while they keep coming', async t => {
  const { dir, gitDir, journalDir } = setup(t)
  const history = new HistoryStore({ gitDir, packs: new PackStore(gitDir), journalDir, foldIntervalMs: 3_600_000, foldIdleMs: 500 })
  await history.open()
  const started = Date.now()
  let n = 0
  // Appends 100 ms apart for about a second: each one pushes the idle fold back.
  while (Date.now() - started < 1_000) {
    await history.append([{ collection: 'posts', id: 'steady', snapshot: snap(++n) }])
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  const last = Date.now()
  t.equal(await readRef(gitDir, HISTORY_REF), null, 'no fold while appends came within the idle time')
  while (await readRef(gitDir, HISTORY_REF) === null && Date.now() - last < 10_000) await new Promise(resolve => setTimeout(resolve, 20))
  t.ok(Date.now() - last >= 380, 'the fold came after the pause (the last append was at most 100 ms before it started)')
  t.equal(onRef(dir, 'posts', 'steady')?.length, n, 'and folded every snapshot')
  await history.close()
})

t.test('hostile or malformed journal content at open is refused: nothing of it reaches the ref, the working tree or any other ref', async t => {
  const warnings: Array<{ message: string, details: Record<string, unknown> }> = []
  const { dir, gitDir, journalDir, open } = setup(t, { warn: (message, details) => warnings.push({ message, details }) })
  // Some history already there, to see it kept.
  const before = open()
  await before.append([{ collection: 'posts', id: 'kept', snapshot: snap(1) }])
  await before.close()
  const kept = onRef(dir, 'posts', 'kept')
  const good = { c: 'posts', i: 'ok', s: { ts: 5, data: { n: 5 }, action: 'save', editor } }
  const frames = [
    Buffer.from('not json'),
    Buffer.from('[1,2,3]'),
    Buffer.from('null'),
    Buffer.from(JSON.stringify({ ...good, i: '../x' })),
    Buffer.from(JSON.stringify({ ...good, i: '__proto__' })),
    Buffer.from('{"c":"posts","i":"ok","s":{"ts":6,"data":{},"action":"save","editor":{}},"__proto__":{"polluted":true}}'),
    Buffer.from(JSON.stringify({ ...good, c: '__proto__' })),
    Buffer.from(JSON.stringify({ ...good, c: 'constructor' })),
    Buffer.from(JSON.stringify({ ...good, c: '../etc' })),
    Buffer.from(JSON.stringify({ ...good, i: 'a/../../b' })),
    Buffer.from(JSON.stringify({ ...good, s: { ...good.s, ts: -1 } })),
    Buffer.from(JSON.stringify({ ...good, s: { ...good.s, ts: '7' } })),
    Buffer.from(JSON.stringify({ ...good, s: { ...good.s, data: null } })),
    Buffer.from(JSON.stringify(good))
  ].map(encodeFrame)
  mkdirSync(journalDir, { recursive: true })
  writeFileSync(path.join(journalDir, '0000000000000007.journal'), Buffer.concat([...frames, Buffer.from('trailing garbage')]))
  writeFileSync(path.join(journalDir, '0000000000000008.journal'), Buffer.from('\u0000'.repeat(100) + 'nothing framed here'))
  const history = open()
  await history.open()
  const names = gitIn(dir, ['ls-tree', '-r', '--name-only', HISTORY_REF]).split('\n').sort()
  t.same(names, [`posts/${shardOf('kept')}/kept.json`, `posts/${shardOf('ok')}/ok.json`].sort(), 'only the well-formed records of valid names reached the ref')
  t.same(onRef(dir, 'posts', 'kept'), kept, 'other history unchanged')
  t.same(onRef(dir, 'posts', 'ok')!.map(s => s.ts), [5, 6], 'the valid records (the one with a __proto__ key is read as plain data)')
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype touched')
  t.same(await history.list('posts', '__proto__').catch((err: Error) => err.message), 'Invalid entry id: it is a reserved name')
  t.ok(warnings.some(w => w.details.refused === 12), `refused records reported: ${JSON.stringify(warnings.map(w => w.details))}`)
  t.ok(warnings.some(w => w.details.segment === '0000000000000007.journal' && w.details.reason === 'bad-magic'), 'the trailing garbage reported')
  t.equal(journalBytes(journalDir), 0, 'the segments are dropped once folded')
  await history.close()
  // The working tree and every ref but the history are as they were.
  const refsAfter = gitIn(dir, ['for-each-ref', '--format=%(refname)']).split('\n')
  t.same(refsAfter, [HISTORY_REF, 'refs/heads/main'].sort())
  t.same(readdirSync(dir).sort(), ['.git', 'README.md'], 'nothing written in the working tree')
  t.equal(gitIn(dir, ['status', '--porcelain', '--untracked-files=all']), '', 'working tree clean')
  t.equal(gitIn(dir, ['fsck', '--no-progress']).includes('error'), false)
  t.notOk(readdirSync(gitDir).includes('x'), 'nothing written beside the journal')
})

t.test('a journal of nothing but garbage changes no ref at open', async t => {
  const { dir, gitDir, journalDir, open } = setup(t, { warn: () => {} })
  const fingerprint = await repoFingerprint(dir)
  mkdirSync(journalDir, { recursive: true })
  writeFileSync(path.join(journalDir, '0000000000000001.journal'), 'garbage')
  const history = open()
  await history.open()
  t.equal(await readRef(gitDir, HISTORY_REF), null, 'no ref created')
  t.equal(await repoFingerprint(dir), fingerprint, 'nothing changed in the working tree or the refs')
  await history.close()
  t.same(readdirSync(journalDir), [])
})

t.test('removeCollection with snapshots still in the journal: the collection\'s history is gone from the ref and does not come back after a restart', async t => {
  const { dir, open } = setup(t)
  const history = open()
  await history.append([{ collection: 'events', id: 'a', snapshot: snap(1) }, { collection: 'posts', id: 'b', snapshot: snap(1) }])
  await history.append([{ collection: 'events', id: 'a', snapshot: snap(2) }])
  await history.removeCollection('events')
  t.notMatch(gitIn(dir, ['ls-tree', '-r', '--name-only', HISTORY_REF]), /^events\//m, 'not on the ref')
  t.same(onRef(dir, 'posts', 'b')!.map(s => s.data.n), [1], 'the other collection\'s snapshot was folded')
  t.same(await history.list('events', 'a'), [])
  // Killed now (no close): a new process reads the journal, and finds nothing of events there.
  const again = open()
  await again.open()
  t.same(await again.list('events', 'a'), [])
  t.notMatch(gitIn(dir, ['ls-tree', '-r', '--name-only', HISTORY_REF]), /^events\//m)
  await again.close()
  await history.close()
})

t.test('concurrent appends while folds land: every snapshot listed once, ts strictly increasing per entry, all on the ref after close', async t => {
  const { dir, open } = setup(t, { manual: false })
  const history = open()
  const ids = ['a', 'b', 'c', 'd']
  const per = 40
  await Promise.all(ids.map(async id => {
    for (let n = 1; n <= per; n++) {
      await history.append([{ collection: 'posts', id, snapshot: snap(n) }])
      if (n % 10 === 0) await new Promise(resolve => setTimeout(resolve, 40))
      // Reads in between see every snapshot so far, whatever was folded meanwhile.
      if (n % 7 === 0) {
        const listed = await history.list('posts', id)
        if (listed.length !== n) t.fail(`${id}: ${listed.length} listed after ${n} appends`)
      }
    }
  }))
  for (const id of ids) {
    const listed = await history.list('posts', id)
    t.same(listed.map(s => s.data.n), Array.from({ length: per }, (_, i) => i + 1), `${id}: all, in order`)
    t.ok(listed.every((s, i) => i === 0 || s.ts > listed[i - 1]!.ts), `${id}: ts strictly increasing`)
  }
  const listed = await Promise.all(ids.map(async id => await history.list('posts', id)))
  await history.close()
  for (const [i, id] of ids.entries()) t.same(onRef(dir, 'posts', id), listed[i], `${id}: on the ref as listed`)
  t.ok(Number(gitIn(dir, ['rev-list', '--count', HISTORY_REF])) < ids.length * per / 2, 'folded in batches, not a commit per append')
})

t.test('an outside writer moving the ref (a fetched history adopted): the next ts follows its documents, not what this process remembered', async t => {
  const { dir, gitDir, open } = setup(t)
  const history = open()
  const [first] = await history.append([{ collection: 'posts', id: 'a', snapshot: snap(1) }])
  await history.flush()
  // Another instance's history for the entry, with a snapshot later than anything here.
  const future = first!.ts + 10_000_000
  const doc = JSON.stringify({ snapshots: [first, { ts: future, data: { n: 99 }, action: 'save', editor }] }) + '\n'
  const blob = gitIn(dir, ['hash-object', '-w', '--stdin'], doc)
  const shard = gitIn(dir, ['mktree'], `100644 blob ${blob}\ta.json\n`)
  const coll = gitIn(dir, ['mktree'], `040000 tree ${shard}\t${shardOf('a')}\n`)
  const root = gitIn(dir, ['mktree'], `040000 tree ${coll}\tposts\n`)
  const parent = (await readRef(gitDir, HISTORY_REF))!
  const commit = gitIn(dir, ['commit-tree', root, '-p', parent, '-m', 'fetched'])
  gitIn(dir, ['update-ref', HISTORY_REF, commit, parent])
  const [next] = await history.append([{ collection: 'posts', id: 'a', snapshot: snap(2) }])
  t.ok(next!.ts > future, 'after the outside snapshot')
  const listed = await history.list('posts', 'a')
  t.same(listed.map(s => s.data.n), [1, 99, 2], 'newest last')
  await history.close()
  t.same(onRef(dir, 'posts', 'a'), listed)
  t.equal(gitIn(dir, ['rev-parse', `${HISTORY_REF}~1`]), commit, 'the fold built on the outside commit')
})
