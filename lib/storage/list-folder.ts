/**
 * Listing a folder without holding the event loop (`readdir` held it 300 ms at 100,000 names): each
 * synchronous call reads a batch of names, and a walk takes a turn every batch's worth of entries.
 */
import { opendirSync, type Dirent } from 'node:fs'
import { setImmediate as nextTurn } from 'node:timers/promises'

/** Entries read per call, and between two turns of the event loop. */
const LIST_BATCH = 2048

/**
 * A new walk's pace.
 * @returns a function to call once an entry: a promise of the next turn every LIST_BATCH calls, else null
 */
export function listingPace (): () => Promise<void> | null {
  let entries = 0
  return () => ++entries % LIST_BATCH === 0 ? nextTurn() : null
}

/**
 * Lists a folder's entries (hidden names included, in the file system's order).
 * @param dir the folder
 * @param pace the walk's pace (`listingPace`)
 * @param onEntry told of each entry; returning false stops the listing
 * @returns resolves when listed; throws when the folder cannot be opened or read
 */
export async function listFolder (dir: string, pace: ReturnType<typeof listingPace>, onEntry: (entry: Dirent) => boolean | void): Promise<void> {
  const listing = opendirSync(dir, { bufferSize: LIST_BATCH })
  try {
    for (let entry = listing.readSync(); entry !== null; entry = listing.readSync()) {
      const turn = pace()
      if (turn !== null) await turn
      if (onEntry(entry) === false) return
    }
  } finally {
    listing.closeSync()
  }
}
