import t from 'tap'
import { appendFileSync } from 'node:fs'
import { readFile, writeFile, mkdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { RevisionLog } from '../../lib/storage/revision-log.js'

const line = (id: string, rev: number, sig: string | null): string => JSON.stringify({ id, rev, sig }) + '\n'
const wait = async (ms: number): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }

async function logWith (t: { testdir: () => string }, text: string): Promise<{ stateDir: string, file: string }> {
  const stateDir = t.testdir()
  const file = path.join(stateDir, 'revisions', 'posts.jsonl')
  await mkdir(path.dirname(file), { recursive: true })
  await writeFile(file, text)
  return { stateDir, file }
}

const plain = (count: number): string => Array.from({ length: count }, (_, i) => line(`e${i}`, 1 + (i % 3), i % 7 === 0 ? null : `10:${i}:1:${i}`)).join('')

t.test('a log of many lines becomes a checkpoint that loads the same states', async t => {
  const { stateDir, file } = await logWith(t, plain(2000) + line('e5', 9, '11:5:1:5'))
  const first = await new RevisionLog(stateDir, 'posts').load()
  t.equal(first.size, 2000)
  t.same(first.get('e5'), { id: 'e5', rev: 9, sig: '11:5:1:5' })
  // The compaction is written a little after the load (the first requests go first).
  await wait(1300)
  const text = await readFile(file, 'utf8')
  t.ok(text.startsWith('{"checkpoint":2,'), 'one checkpoint line, ids and signatures joined by newlines')
  t.equal(text.split('\n').length, 2)
  const again = await new RevisionLog(stateDir, 'posts').load()
  t.same([...again].map(([id, s]) => [id, s.rev, s.sig]), [...first].map(([id, s]) => [id, s.rev, s.sig]))
})

t.test('an append right after the load writes the checkpoint first, then its line after it', async t => {
  const { stateDir, file } = await logWith(t, plain(2000))
  const log = new RevisionLog(stateDir, 'posts')
  await log.load()
  await log.append([{ id: 'e1', rev: 7, sig: '99:1:1:1' }, { id: 'new', rev: 1, sig: '5:5:5:5' }])
  const text = await readFile(file, 'utf8')
  t.ok(text.startsWith('{"checkpoint":2,'))
  t.equal(text.split('\n').length, 4, 'the checkpoint and the two appended lines')
  const states = await new RevisionLog(stateDir, 'posts').load()
  t.equal(states.get('e1')?.rev, 7, 'the later line wins over the checkpoint')
  t.equal(states.get('new')?.rev, 1)
  t.equal(states.get('e2')?.rev, 3)
  t.equal(states.get('e0')?.sig, null, 'a deletion is kept')
})

t.test('a torn last line after a checkpoint is ignored; a revision never goes down', async t => {
  const { stateDir, file } = await logWith(t, plain(2000))
  const log = new RevisionLog(stateDir, 'posts')
  await log.load()
  await log.append([{ id: 'e1', rev: 8, sig: 'a' }])
  appendFileSync(file, line('e2', 1, 'lower') + '{"id":"e3","rev":4')
  const states = await new RevisionLog(stateDir, 'posts').load()
  t.equal(states.get('e1')?.rev, 8)
  t.equal(states.get('e2')?.rev, 3, 'a replayed lower revision is ignored')
  t.equal(states.get('e3')?.rev, 1, 'the torn line is ignored')
})

t.test('a log another writer appended to since the load is not compacted over', async t => {
  const { stateDir, file } = await logWith(t, plain(2000))
  await new RevisionLog(stateDir, 'posts').load()
  appendFileSync(file, line('late', 1, 'x'))
  await wait(1300)
  const text = await readFile(file, 'utf8')
  t.notOk(text.startsWith('{"checkpoint"'), 'left as it was')
  t.equal((await new RevisionLog(stateDir, 'posts').load()).get('late')?.rev, 1)
})

t.test('a malformed checkpoint line is skipped, the lines after it still count', async t => {
  const { stateDir } = await logWith(t, '{"checkpoint":1,"ids":["a"],"revs":[1,2],"sigs":["s"]}\n' + line('b', 2, 's'))
  const states = await new RevisionLog(stateDir, 'posts').load()
  t.same([...states.keys()], ['b'])
})

t.test('a log whose id or signature holds a newline keeps the array checkpoint, and loads the same', async t => {
  for (const odd of [line('bad\nid', 4, '1:1:1:1'), line('e3', 4, 'odd\nsig'), line('e3', 4, '')]) {
    const { stateDir, file } = await logWith(t, plain(2000) + odd)
    const first = await new RevisionLog(stateDir, 'posts').load()
    await wait(1300)
    const text = await readFile(file, 'utf8')
    t.ok(text.startsWith('{"checkpoint":1,'), 'format 1')
    const again = await new RevisionLog(stateDir, 'posts').load()
    t.same([...again].map(([id, s]) => [id, s.rev, s.sig]), [...first].map(([id, s]) => [id, s.rev, s.sig]))
  }
})

t.test('a large format 1 checkpoint is rewritten as format 2 once, with the same states', async t => {
  const ids = Array.from({ length: 2000 }, (_, i) => `e${i}`)
  const { stateDir, file } = await logWith(t, `{"checkpoint":1,"ids":${JSON.stringify(ids)},"revs":${JSON.stringify(ids.map((_, i) => 1 + (i % 5)))},"sigs":${JSON.stringify(ids.map((_, i) => i % 9 === 0 ? null : `3:${i}:1:${i}`))}}\n`)
  const first = await new RevisionLog(stateDir, 'posts').load()
  await wait(1300)
  t.ok((await readFile(file, 'utf8')).startsWith('{"checkpoint":2,'), 'format 2')
  const again = await new RevisionLog(stateDir, 'posts').load()
  t.same([...again].map(([id, s]) => [id, s.rev, s.sig]), [...first].map(([id, s]) => [id, s.rev, s.sig]))
  t.equal(again.get('e9')?.sig, null)
})

t.test('a format 1 checkpoint is still read; a format 2 one whose counts differ is skipped', async t => {
  const old = await logWith(t, '{"checkpoint":1,"ids":["a","b"],"revs":[3,4],"sigs":["s",null]}\n' + line('c', 2, 's'))
  t.same([...(await new RevisionLog(old.stateDir, 'posts').load())].map(([id, s]) => [id, s.rev, s.sig]), [['a', 3, 's'], ['b', 4, null], ['c', 2, 's']])
  const joined = await logWith(t, '{"checkpoint":2,"ids":"a\\nb","revs":[3,4],"sigs":"s\\n"}\n')
  t.same([...(await new RevisionLog(joined.stateDir, 'posts').load())].map(([id, s]) => [id, s.rev, s.sig]), [['a', 3, 's'], ['b', 4, null]])
  const bad = await logWith(t, '{"checkpoint":2,"ids":"a\\nb","revs":[3],"sigs":"s\\nt"}\n' + line('c', 2, 's'))
  t.same([...(await new RevisionLog(bad.stateDir, 'posts').load()).keys()], ['c'])
})

t.test('a short log is left as lines', async t => {
  const { stateDir, file } = await logWith(t, plain(10))
  await new RevisionLog(stateDir, 'posts').load()
  await wait(1300)
  t.notOk((await readFile(file, 'utf8')).startsWith('{"checkpoint"'))
})

t.test('appends made in one turn (the saves of a landed group) are written together, each resolving once its lines are on disk', async t => {
  const stateDir = t.testdir()
  const file = path.join(stateDir, 'revisions', 'posts.jsonl')
  const log = new RevisionLog(stateDir, 'posts')
  await log.load()
  // Eight appenders in lockstep through a few awaits, as a group's continuations run; the folder is missing at first.
  const onDisk: string[] = []
  await Promise.all(Array.from({ length: 8 }, async (_, i) => {
    await Promise.resolve()
    await log.append([{ id: `e${i}`, rev: 1, sig: `1:${i}:1:1` }])
    onDisk.push(await readFile(file, 'utf8'))
  }))
  for (const [i, text] of onDisk.entries()) t.ok(text.includes(line(`e${i}`, 1, `1:${i}:1:1`)), `append ${i} resolved with its line written`)
  // Then appends in separate turns, and two in one call, and one in the same turn as a later one.
  await log.append([{ id: 'e0', rev: 2, sig: '2:0:1:1' }])
  await wait(1)
  await Promise.all([log.append([{ id: 'e1', rev: 2, sig: null }, { id: 'e2', rev: 2, sig: '2:2:1:1' }]), log.append([{ id: 'e9', rev: 1, sig: '1:9:1:1' }])])
  const text = await readFile(file, 'utf8')
  t.equal(text.split('\n').length, 13, 'every line once, none torn')
  const states = await new RevisionLog(stateDir, 'posts').load()
  t.same(states.get('e0'), { id: 'e0', rev: 2, sig: '2:0:1:1' })
  t.same(states.get('e1'), { id: 'e1', rev: 2, sig: null })
  t.same(states.get('e2'), { id: 'e2', rev: 2, sig: '2:2:1:1' })
  t.same(states.get('e7'), { id: 'e7', rev: 1, sig: '1:7:1:1' })
  t.same(states.get('e9'), { id: 'e9', rev: 1, sig: '1:9:1:1' })
  t.equal(states.size, 9)
})

t.test('a batch that cannot be written fails every append in it, and the next append writes again', async t => {
  const stateDir = t.testdir()
  const file = path.join(stateDir, 'revisions', 'posts.jsonl')
  await mkdir(file, { recursive: true })
  const log = new RevisionLog(stateDir, 'posts')
  const results = await Promise.allSettled([log.append([{ id: 'a', rev: 1, sig: '1:1:1:1' }]), log.append([{ id: 'b', rev: 1, sig: '1:1:1:2' }])])
  t.same(results.map(r => r.status), ['rejected', 'rejected'], 'both refused (the log is a folder)')
  await rm(file, { recursive: true })
  await log.append([{ id: 'c', rev: 1, sig: '1:1:1:3' }])
  t.equal(await readFile(file, 'utf8'), line('c', 1, '1:1:1:3'))
})
