/**
 * One service process per repository: `.git/cms/instance.lock` holds the pid of the process that
 * serves it. A lock whose process is gone (a crash, kill -9) is taken over.
 */
import { open, readFile, rm, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { StartupError } from '../errors.js'

/** A held instance lock. */
export interface InstanceLock {
  release: () => Promise<void>
}

/**
 * Takes the instance lock of a repository.
 * @param stateDir `.git/cms`
 * @returns the held lock; throws StartupError when another live process holds it
 */
export async function acquireInstanceLock (stateDir: string): Promise<InstanceLock> {
  await mkdir(stateDir, { recursive: true })
  const file = path.join(stateDir, 'instance.lock')
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(file, 'wx')
      await handle.writeFile(String(process.pid))
      await handle.close()
      let released = false
      return {
        release: async () => {
          if (released) return
          released = true
          await rm(file, { force: true })
        }
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      const pid = Number((await readFile(file, 'utf8').catch(() => '')).trim())
      if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
        throw new StartupError(`another git-cms process (pid ${pid}) already serves this repository`)
      }
      await rm(file, { force: true })
    }
  }
  throw new StartupError('could not take the instance lock in .git/cms/instance.lock')
}

function isAlive (pid: number): boolean {
  if (pid === process.pid) return true
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}
