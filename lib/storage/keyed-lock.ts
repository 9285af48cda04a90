/**
 * Per-key FIFO locks for async work: work under one key runs one at a time in arrival order, under
 * different keys in parallel. A key with nothing running or waiting is forgotten.
 */
import pLimit, { type Limit } from 'p-limit'

export class KeyedLock {
  /** A queue of one at a time for each key with work running or waiting. */
  private readonly queues = new Map<string, Limit>()

  /**
   * Runs `fn` once every earlier holder of `key` has finished.
   * @param key what to lock (an entry, a collection, an editor's drafts ...)
   * @param fn the work
   * @returns what fn returns (or its rejection); the lock is released either way
   */
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const queue = this.queues.get(key) ?? pLimit(1)
    this.queues.set(key, queue)
    try {
      return await queue(fn)
    } finally {
      // p-limit counts the work done before its caller resumes: the last one removes the key.
      if (queue.activeCount === 0 && queue.pendingCount === 0) this.queues.delete(key)
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
