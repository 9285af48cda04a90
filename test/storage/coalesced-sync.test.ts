import t, { type Test } from 'tap'
import fs, { mkdtempSync, openSync, closeSync, writeSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { promisify } from 'node:util'
import os from 'node:os'
import path from 'node:path'
import { CoalescedSync } from '../../lib/storage/coalesced-sync.js'

const fdatasync = promisify(fs.fdatasync)

/** A real file whose fdatasyncs are counted, with the order of starts and ends. */
function countedFile (t: Test): { sync: CoalescedSync, fd: number, log: string[], rounds: () => number } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cms-coalesced-'))
  const fd = openSync(path.join(dir, 'journal'), 'a')
  t.teardown(async () => { closeSync(fd); await rm(dir, { recursive: true, force: true }) })
  const log: string[] = []
  let n = 0
  const sync = new CoalescedSync(async () => {
    const round = ++n
    log.push(`start ${round}`)
    await fdatasync(fd)
    log.push(`end ${round}`)
  })
  return { sync, fd, log, rounds: () => n }
}

t.test('the requests of one turn of the event loop share one fsync', async t => {
  const { sync, fd, rounds } = countedFile(t)
  const requests: Array<Promise<void>> = []
  for (let i = 0; i < 5; i++) {
    writeSync(fd, `record ${i}\n`)
    requests.push(sync.sync())
  }
  await Promise.all(requests)
  // Started at once, the first request made a round of its own and the other four the next one.
  t.equal(rounds(), 1, 'one fsync for five requests made in the same turn')
})

t.test('a request made while a round runs is served by a round that starts after it', async t => {
  const { sync, log, rounds } = countedFile(t)
  const first = sync.sync()
  // Wait until the first round has started (its fsync is in the thread pool).
  while (rounds() === 0) await new Promise(resolve => setImmediate(resolve))
  t.same(log, ['start 1'])
  const startedBefore = log.length
  const second = sync.sync()
  const third = sync.sync()
  let secondDone = false
  void second.then(() => { secondDone = true })
  await first
  t.notOk(secondDone, 'not served by the round that was under way when it was made')
  await Promise.all([second, third])
  t.equal(rounds(), 2, 'both later requests share the second round')
  t.ok(log.indexOf('start 2') >= startedBefore && log.indexOf('start 2') > log.indexOf('end 1'), 'the second round starts after the first ended')
})

t.test('a failed round rejects its own requests only; the next round serves later ones', async t => {
  let fail = true
  let n = 0
  const sync = new CoalescedSync(async () => {
    n++
    await new Promise(resolve => setImmediate(resolve))
    if (fail) throw new Error('device gone')
  })
  const a = sync.sync()
  const b = sync.sync()
  await t.rejects(a, /device gone/)
  await t.rejects(b, /device gone/)
  fail = false
  await sync.sync()
  t.equal(n, 2)
})
