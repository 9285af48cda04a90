/**
 * CPU time of a server process (and of its child processes) from /proc, for the benches' figures
 * and their waits for a server's start-up work (Linux only: null elsewhere).
 */
import { readdir, readFile } from 'node:fs/promises'

/**
 * A process's CPU time so far (user + system, every thread).
 * @param pid the process
 * @returns milliseconds, or null when /proc cannot tell
 */
async function processCpuMs (pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th, in ticks of 10 ms.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return null
  }
}

/**
 * The CPU time of a process and of its live descendants (a child that exited takes its time with it).
 * @param pid the root process
 * @returns milliseconds, or null when the root process cannot be read
 */
export async function processTreeCpuMs (pid: number): Promise<number | null> {
  const own = await processCpuMs(pid)
  if (own === null) return null
  let sum = own
  for (const child of await childrenOf(pid)) sum += (await processTreeCpuMs(child)) ?? 0
  return sum
}

async function childrenOf (pid: number): Promise<number[]> {
  const pids: number[] = []
  try {
    for (const tid of await readdir(`/proc/${pid}/task`)) {
      const text = await readFile(`/proc/${pid}/task/${tid}/children`, 'utf8').catch(() => '')
      for (const p of text.split(' ')) if (/^\d+$/.test(p)) pids.push(Number(p))
    }
  } catch {}
  return pids
}

/** How long to wait at most for a server's start-up work to end. */
const SETTLE_MAX_MS = 60_000
const SETTLE_STEP_MS = 500
/** A server using less CPU than this share of one core over a step has settled. */
const SETTLED_CPU_SHARE = 0.05

/**
 * Waits until a server process and its child processes are (nearly) idle, from their CPU time in
 * /proc (Linux only).
 * @param pid the server process
 * @returns how long it took (ms), or null where /proc is not available
 */
export async function settled (pid: number): Promise<number | null> {
  const started = Date.now()
  let before = await processTreeCpuMs(pid)
  if (before === null) return null
  while (Date.now() - started < SETTLE_MAX_MS) {
    await new Promise(resolve => setTimeout(resolve, SETTLE_STEP_MS))
    const now = await processTreeCpuMs(pid)
    if (now === null) return null
    // A child that exited between two steps takes its CPU with it (the sum falls): not settled yet.
    if (now >= before && now - before < SETTLE_STEP_MS * SETTLED_CPU_SHARE) break
    before = now
  }
  return Date.now() - started
}
