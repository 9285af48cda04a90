/**
 * A least-recently-used cache bounded by a total weight (bytes, entries ...), so a cache of git
 * objects keeps the hot ones in memory without growing with the repository.
 */

/** A bounded map that forgets its least recently used values first. */
export class LruCache<K, V> {
  private readonly values = new Map<K, { value: V, weight: number }>()
  private total = 0
  private readonly maxWeight: number
  private readonly weigh: (value: V) => number
  private readonly maxEntries: number

  /**
   * @param maxWeight the total weight kept at most
   * @param weigh the weight of one value (default 1: the cache counts entries)
   * @param maxEntries the values kept at most, whatever their weight (default: no bound but the weight)
   */
  constructor (maxWeight: number, weigh: (value: V) => number = () => 1, maxEntries = Infinity) {
    this.maxWeight = maxWeight
    this.weigh = weigh
    this.maxEntries = maxEntries
  }

  /** How many values are kept. */
  get size (): number {
    return this.values.size
  }

  /** The total weight of the values kept. */
  get weight (): number {
    return this.total
  }

  /**
   * Looks a value up and marks it as recently used.
   * @param key the key
   * @returns the value, or undefined
   */
  get (key: K): V | undefined {
    const hit = this.values.get(key)
    if (hit === undefined) return undefined
    this.values.delete(key)
    this.values.set(key, hit)
    return hit.value
  }

  /**
   * Stores a value, evicting the least recently used ones beyond the weight bound.
   * @param key the key
   * @param value the value
   */
  set (key: K, value: V): void {
    const old = this.values.get(key)
    if (old !== undefined) {
      this.total -= old.weight
      this.values.delete(key)
    }
    const weight = this.weigh(value)
    if (weight > this.maxWeight) return
    this.values.set(key, { value, weight })
    this.total += weight
    for (const [oldest, entry] of this.values) {
      if (this.total <= this.maxWeight && this.values.size <= this.maxEntries) break
      this.values.delete(oldest)
      this.total -= entry.weight
    }
  }

  /**
   * Forgets a value.
   * @param key the key
   */
  delete (key: K): void {
    const old = this.values.get(key)
    if (old === undefined) return
    this.values.delete(key)
    this.total -= old.weight
  }
}
