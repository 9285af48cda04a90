/**
 * The targets of issue 28 (what users feel), by entry count: the 10,000 column for sites up to
 * 10,000 entries, the 100,000 column above.
 */

/** The targets that depend on the site's size. */
export interface SizeTargets {
  /** List and search p50 (ms). */
  readP50Ms: number
  /** Save p95 with 8 editors saving at once (ms). */
  saveP95Ms: number
  /** Saves per second from 8 clients, with history and fsync. */
  savesPerSecond: number
  /** Restart (unchanged content) to the first list (ms). */
  restartMs: number
  /** First start (no service state) to the first list (ms). */
  firstStartMs: number
  /** Server RSS after warm-up (MB). */
  rssMb: number
}

const SMALL: SizeTargets = { readP50Ms: 5, saveP95Ms: 25, savesPerSecond: 200, restartMs: 1000, firstStartMs: 3000, rssMb: 200 }
const LARGE: SizeTargets = { readP50Ms: 20, saveP95Ms: 40, savesPerSecond: 200, restartMs: 3000, firstStartMs: 15_000, rssMb: 400 }

/**
 * The targets for a site of N entries.
 * @param entries number of entries
 * @returns the column of the table that applies
 */
export function targetsFor (entries: number): SizeTargets {
  return entries <= 10_000 ? SMALL : LARGE
}

/** Publishing 100 drafts in one request (ms), at 10,000 entries. */
export const PUBLISH_100_MS = 2000
/** The server's peak RSS in the side-by-side workload, as a share of decap-server's. */
export const PEAK_RSS_SHARE_OF_DECAP = 2 / 3
