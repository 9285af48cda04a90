/**
 * Binary search over a sorted list of entry ids (a search segment's documents are kept in id order).
 */

/**
 * Where `id` is in sorted `ids`.
 * @param ids ids in ascending code-unit order
 * @param id the id to find
 * @returns its position, or -1 when absent
 */
export function sortedIndexOf (ids: readonly string[], id: string): number {
  let lo = 0
  let hi = ids.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((ids[mid] as string) < id) lo = mid + 1
    else hi = mid
  }
  return lo < ids.length && ids[lo] === id ? lo : -1
}
