import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { acquireInstanceLock } from '../../lib/storage/instance-lock.js'
import { StartupError } from '../../lib/errors.js'

function startTimeOf (pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!
}
const BOOT_ID = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()

function stateDir (t: Test): string {
  const dir = path.join(t.testdir(), 'cms')
  mkdirSync(dir, { recursive: true })
  return dir
}

/** A live process that is not us (a sleeping child). */
async function otherProcess (t: Test): Promise<number> {
  const child = spawn('sleep', ['30'], { stdio: 'ignore' })
  t.teardown(() => { child.kill('SIGKILL') })
  await new Promise(resolve => child.once('spawn', resolve))
  return child.pid!
}

t.test('the lock records pid, process start time and boot id, and is released', async t => {
  const dir = stateDir(t)
  const lock = await acquireInstanceLock(dir)
  const held = JSON.parse(readFileSync(path.join(dir, 'instance.lock'), 'utf8'))
  t.same(held, { pid: process.pid, start: startTimeOf(process.pid), boot: BOOT_ID })
  t.equal(lock.takenAt, statSync(path.join(dir, 'instance.lock')).ctimeMs, 'takenAt is the lock file\'s ctime (the file system\'s clock)')
  await t.rejects(acquireInstanceLock(dir), StartupError, 'a second holder in this process is refused while held')
  await lock.release()
})

t.test('a lock naming our own pid is stale (a container restarts us as pid 1 again)', async t => {
  const dir = stateDir(t)
  writeFileSync(path.join(dir, 'instance.lock'), JSON.stringify({ pid: process.pid, start: startTimeOf(process.pid), boot: BOOT_ID }))
  const lock = await acquireInstanceLock(dir)
  t.pass('taken over')
  await lock.release()
  writeFileSync(path.join(dir, 'instance.lock'), String(process.pid))
  await (await acquireInstanceLock(dir)).release()
  t.pass('the old bare-pid format naming our pid is stale too')
})

t.test('a live pid with another start time or another boot is a reused pid: stale', async t => {
  const dir = stateDir(t)
  const pid = await otherProcess(t)
  writeFileSync(path.join(dir, 'instance.lock'), JSON.stringify({ pid, start: '1', boot: BOOT_ID }))
  await (await acquireInstanceLock(dir)).release()
  t.pass('another start time')
  writeFileSync(path.join(dir, 'instance.lock'), JSON.stringify({ pid, start: startTimeOf(pid), boot: '00000000-0000-0000-0000-000000000000' }))
  await (await acquireInstanceLock(dir)).release()
  t.pass('another boot')
  writeFileSync(path.join(dir, 'instance.lock'), JSON.stringify({ pid: 2 ** 22 + 17, start: '5', boot: BOOT_ID }))
  await (await acquireInstanceLock(dir)).release()
  t.pass('a dead pid')
})

t.test('a live holder with its own start time and boot is respected', async t => {
  const dir = stateDir(t)
  const pid = await otherProcess(t)
  writeFileSync(path.join(dir, 'instance.lock'), JSON.stringify({ pid, start: startTimeOf(pid), boot: BOOT_ID }))
  await t.rejects(acquireInstanceLock(dir), { name: 'StartupError', message: new RegExp(`pid ${pid}`) })
  writeFileSync(path.join(dir, 'instance.lock'), String(pid))
  await t.rejects(acquireInstanceLock(dir), { name: 'StartupError' }, 'the old bare-pid format of a live process is respected')
})
