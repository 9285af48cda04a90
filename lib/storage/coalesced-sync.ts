/**
 * fsync requests on one file or folder, coalesced: a request is served by the first fsync that
 * starts after it was made (an fsync already under way may have started before the caller's write
 * or rename, so it does not count), and every request made before that one starts shares it.
 *
 * A round starts at the end of the event loop's turn in which it was first asked for (setImmediate,
 * after the poll phase), not at once: the requests of one turn (the saves whose HTTP requests, or
 * whose file fsyncs, completed in the same poll phase) then share one fsync instead of two (the
 * first one's, started at once, and the next one for the rest). An fsync is the dearest call of a
 * save on this kind of machine (a thread-pool hand-off, a few block requests and a device flush,
 * each request a VM exit on a virtio disk: issue 18, ninth pass); waiting for the end of the turn
 * delays it by the rest of the turn's work, which the caller's other fsyncs overlap anyway.
 */
import fs from 'node:fs'
import { promisify } from 'node:util'
import { syncDirectory } from './atomic-write.js'

const fdatasync = promisify(fs.fdatasync)

/** Coalesced fsyncs of one open descriptor, or of a folder opened for each round. */
export class CoalescedSync {
  #running: Promise<void> | null = null
  #next: Promise<void> | null = null

  /**
   * @param target the descriptor to sync, or a function that syncs once (a folder: opened per round)
   */
  constructor (private readonly target: () => Promise<void>) {}

  /**
   * Coalesced fdatasync of an open file (its data and the size needed to read it).
   * @param fd an open descriptor, kept open by the caller while requests may come
   * @returns the coalescer
   */
  static dataOf (fd: number): CoalescedSync {
    return new CoalescedSync(async () => { await fdatasync(fd) })
  }

  /**
   * Coalesced fsync of a folder (its entries: renames and creates into it).
   * @param dir the folder
   * @returns the coalescer
   */
  static folder (dir: string): CoalescedSync {
    return new CoalescedSync(async () => { await syncDirectory(dir) })
  }

  /**
   * Resolves once an fsync that started after this call succeeded; rejects when that one failed.
   * @returns resolves when what was written (or renamed) before the call is durable
   */
  async sync (): Promise<void> {
    // The round not started yet: it starts at the end of this turn, or after the one under way
    // (which may have started before the caller's write), so every request until then shares it.
    this.#next ??= this.#schedule()
    return await this.#next
  }

  #schedule (): Promise<void> {
    const before = this.#running
    return new Promise<void>((resolve, reject) => {
      const start = (): void => {
        // Requests from here on wait for the round after this one.
        this.#next = null
        const run = this.target()
        this.#running = run
        const clear = (): void => { if (this.#running === run) this.#running = null }
        run.then(clear, clear)
        run.then(resolve, reject)
      }
      const startAtEndOfTurn = (): void => { setImmediate(start) }
      if (before === null) startAtEndOfTurn()
      else before.then(startAtEndOfTurn, startAtEndOfTurn)
    })
  }
}
