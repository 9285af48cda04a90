/**
 * Per-key FIFO locks: work under one key runs one at a time in arrival order, work under different
 * keys runs in parallel. A key with nothing running or waiting is forgotten, so keys never leak.
 * Many keys are always taken in sorted order (`withLocks`), so two holders never deadlock.
 */

/** The tail of one key's queue and how many holders and waiters it has. */
interface KeyQueue {
  tail: Promise<void>
  pending: number
}

/** Per-key FIFO mutual exclusion for async work. */
export class KeyedLock {
  private readonly queues = new Map<string, KeyQueue>()

  /**
   * Runs `fn` once every earlier holder of `key` has finished.
   * @param key what to lock (an entry, a collection, an editor's drafts ...)
   * @param fn the work
   * @returns what fn returns (or its rejection); the lock is released either way
   */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    let queue = this.queues.get(key)
    if (queue === undefined) {
      queue = { tail: Promise.resolve(), pending: 0 }
      this.queues.set(key, queue)
    }
    const previous = queue.tail
    let release!: () => void
    queue.tail = new Promise<void>(resolve => { release = resolve })
    queue.pending++
    const held = queue
    try {
      await previous
      return await fn()
    } finally {
      release()
      held.pending--
      // Only the last one out removes the key, and only if nobody queued behind it meanwhile.
      if (held.pending === 0 && this.queues.get(key) === held) this.queues.delete(key)
    }
  }

  /**
   * How many keys are currently held or waited for (for tests and diagnostics).
   * @returns the number of live keys
   */
  get size (): number {
    return this.queues.size
  }
}

/**
 * Runs `fn` while holding every lock in `keys`.
 * @param locks the instance's keyed locks
 * @param keys lock keys (duplicates are ignored)
 * @param fn the work
 * @returns what fn returns
 */
export async function withLocks<T> (locks: KeyedLock, keys: string[], fn: () => Promise<T>): Promise<T> {
  const sorted = [...new Set(keys)].sort()
  const take = async (i: number): Promise<T> => {
    const key = sorted[i]
    if (key === undefined) return await fn()
    return await locks.run(key, async () => await take(i + 1))
  }
  return await take(0)
}
