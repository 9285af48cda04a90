/**
 * Timing two ways of doing one thing fairly: each is called in blocks of calls, the blocks
 * alternating and each pair's order flipped from the last. Call by call, each call paid for the
 * garbage the other left (V8 collects a thread's heap while it awaits); one way after the other, the
 * two met different moments of a machine whose speed drifts by 10-60%.
 */

/**
 * Calls each path `warmUp + runs` times, in alternating blocks of `block` calls.
 * @param paths each way, called with whether this call is timed (the first `warmUp` are not)
 * @param warmUp untimed calls of each path first, a multiple of `block`
 * @param runs timed calls of each path, a multiple of `block`
 * @param block calls of one path in a row
 */
export async function inAlternatingBlocks (paths: ReadonlyArray<(timed: boolean) => Promise<unknown>>, warmUp: number, runs: number, block: number): Promise<void> {
  for (let done = 0; done < warmUp + runs; done += block) {
    for (const path of (done / block) % 2 === 0 ? paths : [...paths].reverse()) {
      for (let i = 0; i < block; i++) await path(done >= warmUp)
    }
  }
}
