/**
 * The longest the main thread held the event loop, counted in CPU time as the contract counts it
 * (wall-clock holds grow with the machine's load; CPU time much less). Linux only: the main
 * thread's own CPU time is read from /proc every few milliseconds from a timer; the most it grew
 * between two consecutive timer callbacks is an upper bound of the CPU of the longest task.
 */
import { readFileSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'

/** What `holdsDuring` measured. */
export interface Holds {
  /** The longest wall-clock hold (the event-loop delay histogram's max), ms. */
  wallMs: number
  /** The most main-thread CPU between two timer callbacks, ms; null where /proc cannot tell. */
  cpuMs: number | null
}

/** Linux's clock ticks per second for /proc's utime and stime (USER_HZ, 100 on every Linux ABI). */
const TICKS_PER_SECOND = 100

/** The main thread's CPU time so far, in ms, or null when /proc cannot tell. */
function mainThreadCpuMs (): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8')
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 1000 / TICKS_PER_SECOND
  } catch {
    return null
  }
}

/**
 * Runs `work` and reports the longest the event loop was held meanwhile, in wall-clock and in CPU.
 * @param work what to measure
 * @returns the holds
 */
export async function holdsDuring (work: () => Promise<void>): Promise<Holds> {
  const histogram = monitorEventLoopDelay({ resolution: 10 })
  let last = mainThreadCpuMs()
  let cpuMs = last === null ? null : 0
  const timer = setInterval(() => {
    const now = mainThreadCpuMs()
    if (now === null || last === null || cpuMs === null) return
    cpuMs = Math.max(cpuMs, now - last)
    last = now
  }, 2)
  histogram.enable()
  try {
    await work()
    return { wallMs: histogram.max / 1e6, cpuMs }
  } finally {
    histogram.disable()
    clearInterval(timer)
  }
}
