/**
 * Caps V8's young generation (and the old generation's growth factor) for the `git-cms` process (not for applications that embed the
 * library: their V8 settings are theirs).
 *
 * Why: under load V8 doubles the young generation's two semi-spaces up to 16 MB each and keeps
 * them committed; with the index out of the heap, that was the largest part of the server's
 * resident memory after warm-up. Semi-spaces of 8 MB measured the same request latencies. V8 reads
 * `--max-semi-space-size` only when the process starts, but it reads `--semi-space-growth-factor`
 * whenever it grows the young generation: once the semi-spaces reach the cap, growth is turned off.
 * It is checked after every garbage collection (the only time the young generation grows).
 */
import v8 from 'node:v8'
import { PerformanceObserver } from 'node:perf_hooks'

/** The size each semi-space may reach. */
const MAX_SEMI_SPACE_BYTES = 8 * 1024 * 1024

/**
 * After each full collection V8 lets the old generation grow to its live size times a factor it
 * picks from the collector's speed, up to 4x on a machine with gigabytes of memory (its default
 * limit): with 60 MB of index rows alive (100,000 entries) the heap grew to 250 MB of mostly
 * garbage before the next full collection (issue 18). A fixed factor of 1.5 keeps the heap near its
 * live size at the cost of more frequent (incremental) full collections. V8 reads the flag whenever
 * it computes the next limit.
 */
const OLD_GENERATION_GROWING_PERCENT = 50

/**
 * Starts watching the young generation's size; once its semi-spaces reach the cap, stops growth.
 * @returns a function that stops watching
 */
export function capYoungGeneration (): () => void {
  // The old generation: see OLD_GENERATION_GROWING_PERCENT.
  v8.setFlagsFromString(`--heap-growing-percent=${OLD_GENERATION_GROWING_PERCENT}`)
  let capped = false
  const check = (): void => {
    if (capped) return
    const newSpace = v8.getHeapSpaceStatistics().find(s => s.space_name === 'new_space')
    // new_space counts both semi-spaces.
    if (newSpace !== undefined && newSpace.space_size >= 2 * MAX_SEMI_SPACE_BYTES) {
      v8.setFlagsFromString('--semi-space-growth-factor=1')
      capped = true
      observer.disconnect()
    }
  }
  const observer = new PerformanceObserver(check)
  observer.observe({ entryTypes: ['gc'] })
  check()
  return () => { observer.disconnect() }
}
