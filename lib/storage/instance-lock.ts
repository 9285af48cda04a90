/**
 * One service process per repository: `.git/cms/instance.lock` holds `{ pid, start, boot }`, since a
 * bare pid is reused; the lock is taken over when its pid is our own, dead, or started at another time or boot.
 */
import { open, readFile, rm, mkdir } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { StartupError } from '../errors.js'

/** A held instance lock. */
export interface InstanceLock {
  release: () => Promise<void>
  /** The lock file's ctime (ms), on the file system's clock: files a dead predecessor left are older. */
  takenAt: number
}

/** What the lock file records: the pid, its start time (clock ticks since boot) and the boot id, null when unknown. */
interface LockOwner {
  pid: number
  start: string | null
  boot: string | null
}

/** Lock files this process holds: one naming our pid that is not in here was left by an earlier process. */
const heldHere = new Set<string>()

/**
 * Takes the instance lock of a repository.
 * @param stateDir `.git/cms`
 * @returns the held lock; throws StartupError when another live process holds it
 */
export async function acquireInstanceLock (stateDir: string): Promise<InstanceLock> {
  await mkdir(stateDir, { recursive: true })
  const file = path.join(stateDir, 'instance.lock')
  for (let attempt = 0; attempt < 2; attempt++) {
    if (heldHere.has(file)) throw new StartupError(`another git-cms instance in this process (pid ${process.pid}) already serves this repository`)
    try {
      const handle = await open(file, 'wx')
      let takenAt: number
      try {
        await handle.writeFile(JSON.stringify(ownerOf(process.pid)))
        await handle.sync()
        takenAt = (await handle.stat()).ctimeMs
      } finally {
        await handle.close()
      }
      heldHere.add(file)
      let released = false
      return {
        takenAt,
        release: async () => {
          if (released) return
          released = true
          heldHere.delete(file)
          await rm(file, { force: true })
        }
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      const owner = parseOwner(await readFile(file, 'utf8').catch(() => ''))
      if (owner !== null && holdsLock(owner)) {
        throw new StartupError(`another git-cms process (pid ${owner.pid}) already serves this repository`)
      }
      await rm(file, { force: true })
    }
  }
  throw new StartupError('could not take the instance lock in .git/cms/instance.lock')
}

function parseOwner (text: string): LockOwner | null {
  const trimmed = text.trim()
  if (/^\d+$/.test(trimmed)) return { pid: Number(trimmed), start: null, boot: null }
  try {
    const data = JSON.parse(trimmed) as Partial<LockOwner>
    if (!Number.isInteger(data.pid) || (data.pid ?? 0) <= 0) return null
    return { pid: data.pid!, start: typeof data.start === 'string' ? data.start : null, boot: typeof data.boot === 'string' ? data.boot : null }
  } catch {
    return null
  }
}

/** Whether the process a lock names is alive and is the very process that wrote it. */
function holdsLock (owner: LockOwner): boolean {
  // Our own pid, and not held by this process: an earlier process that had our pid.
  if (owner.pid === process.pid || !isAlive(owner.pid)) return false
  const now = ownerOf(owner.pid)
  if (owner.boot !== null && now.boot !== null && owner.boot !== now.boot) return false
  if (owner.start !== null && now.start !== null && owner.start !== now.start) return false
  return true
}

function ownerOf (pid: number): LockOwner {
  return { pid, start: startTimeOf(pid), boot: readProc('/proc/sys/kernel/random/boot_id') }
}

/** Field 22 of /proc/<pid>/stat (after the command name, which may hold spaces and parentheses). */
function startTimeOf (pid: number): string | null {
  const stat = readProc(`/proc/${pid}/stat`)
  if (stat === null) return null
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null
}

function readProc (file: string): string | null {
  try {
    return readFileSync(file, 'utf8').trim()
  } catch {
    return null
  }
}

function isAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}
