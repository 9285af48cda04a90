/**
 * fsync requests on one file or folder, coalesced: a request is served by the first fsync that
 * starts after it was made (an fsync already under way may have started before the caller's write
 * or rename, so it does not count), and every request made while one fsync runs shares the next.
 * Under load, N concurrent saves wait for two fsyncs at most instead of making N.
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
    if (this.#running === null) return await this.#start()
    // One is under way (it may have started before the caller's write): share the next one.
    this.#next ??= this.#running.then(noop, noop).then(async () => {
      this.#next = null
      return await this.#start()
    })
    return await this.#next
  }

  #start (): Promise<void> {
    const run = this.target()
    this.#running = run
    const clear = (): void => { if (this.#running === run) this.#running = null }
    run.then(clear, clear)
    return run
  }
}

function noop (): void {}
