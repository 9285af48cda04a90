import t from 'tap'
import { KeyedLock } from '../../lib/storage/keyed-lock.js'

const tick = async (ms = 5): Promise<void> => await new Promise(resolve => setTimeout(resolve, ms))

t.test('work under one key runs one at a time, in arrival order', async t => {
  const locks = new KeyedLock()
  const events: string[] = []
  let running = 0
  let maxRunning = 0
  await Promise.all([0, 1, 2, 3, 4].map(async i => await locks.run('k', async () => {
    running++
    maxRunning = Math.max(maxRunning, running)
    events.push(`start ${i}`)
    await tick(5 - i)
    events.push(`end ${i}`)
    running--
  })))
  t.equal(maxRunning, 1)
  t.same(events, [0, 1, 2, 3, 4].flatMap(i => [`start ${i}`, `end ${i}`]))
  t.equal(locks.size, 0, 'idle keys are forgotten')
})

t.test('different keys run in parallel', async t => {
  const locks = new KeyedLock()
  let running = 0
  let maxRunning = 0
  await Promise.all(['a', 'b', 'c'].map(async k => await locks.run(k, async () => {
    running++
    maxRunning = Math.max(maxRunning, running)
    await tick(10)
    running--
  })))
  t.equal(maxRunning, 3)
  t.equal(locks.size, 0)
})

t.test('a failing holder releases the lock and its error reaches only its caller', async t => {
  const locks = new KeyedLock()
  const failing = locks.run('k', async () => { await tick(); throw new Error('boom') })
  const next = locks.run('k', async () => 'next ran')
  await t.rejects(failing, { message: 'boom' })
  t.equal(await next, 'next ran')
  t.equal(locks.size, 0)
})

t.test('the value of fn is returned and keys stay live while waited for', async t => {
  const locks = new KeyedLock()
  let release!: () => void
  const first = locks.run('k', async () => await new Promise<string>(resolve => { release = () => resolve('one') }))
  const second = locks.run('k', async () => 'two')
  await tick()
  t.equal(locks.size, 1)
  release()
  t.same(await Promise.all([first, second]), ['one', 'two'])
  t.equal(locks.size, 0)
})
