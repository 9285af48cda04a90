/**
 * Holding many keyed locks at once, always taken in sorted order so two holders never deadlock.
 */
import type { KeyedLock } from '../storage/keyed-lock.js'

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
