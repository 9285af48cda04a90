/**
 * Per-key FIFO locks for async work: work under one key runs one at a time in arrival order, under
 * different keys in parallel. A key with nothing running or waiting is forgotten.
 */
export class KeyedLock {
  /** The promise the last holder or waiter of each key resolves when done. */
  private readonly queues = new Map<string, Promise<void>>()

  /**
   * Runs `fn` once every earlier holder of `key` has finished.
   * @param key what to lock (an entry, a collection, an editor's drafts ...)
   * @param fn the work
   * @returns what fn returns (or its rejection); the lock is released either way
   */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(key)
    let release!: () => void
    const done = new Promise<void>(resolve => { release = resolve })
    this.queues.set(key, done)
    try {
      await previous
      return await fn()
    } finally {
      release()
      // The last one queued removes the key.
      if (this.queues.get(key) === done) this.queues.delete(key)
    }
  }

  /** How many keys are held or waited for (tests check that none leak). */
  get size (): number {
    return this.queues.size
  }
}

/**
 * Runs `fn` while holding every lock in `keys`, taken in sorted order so that two holders never deadlock.
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
