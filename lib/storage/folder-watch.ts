/**
 * A file watcher that keeps no record of the files it watches (a tree of every file took 27 MB at
 * 100,000 entries): one non-recursive `fs.watch` per folder under a root, each event passed on by
 * path. libuv discards inotify's IN_Q_OVERFLOW, so a turn of the event loop delivering half of
 * `max_queued_events` tells every watch `onLost` (its owner re-checks every file).
 */
import { lstatSync, readFileSync, statSync, watch, type FSWatcher } from 'node:fs'
import path from 'node:path'
import pLimit from 'p-limit'
import { listFolder, listingPace } from './list-folder.js'

/** What a watch tells its owner. */
export interface FolderWatchOptions {
  /** Every path that may have changed: a file, or a folder that appeared or went away (absolute). */
  onPath: (file: string) => void
  /** Events may have been lost (the kernel's queue overflowed): anything under the root may have changed. */
  onLost: () => void
  /** A folder could not be watched (its changes go unseen), or a watch failed. */
  onError?: (err: Error) => void
  /** Aborting it closes the watch, one still starting included. */
  signal?: AbortSignal
}

/** The kernel's inotify queue length. */
function queueLimit (): number {
  try {
    const n = Number.parseInt(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'), 10)
    if (Number.isInteger(n) && n > 0) return n
  } catch {}
  return 16384
}

let lostThreshold = -1
/** Events delivered in this turn of the event loop, over every watch of the process. */
let turnEvents = 0
let resetPlanned = false
const live = new Set<FolderWatch>()

function countEvent (): void {
  if (lostThreshold < 0) setLostThreshold()
  turnEvents++
  if (!resetPlanned) {
    resetPlanned = true
    // Immediates run after the poll phase: one drain of the inotify queue is counted whole.
    setImmediate(() => { turnEvents = 0; resetPlanned = false })
  }
  if (turnEvents === lostThreshold) for (const w of [...live]) w.lost()
}

/**
 * The number of events one turn must deliver to be taken as a possible overflow (for tests).
 * @param n events per turn; undefined: back to half the kernel's queue
 */
export function setLostThreshold (n?: number): void {
  lostThreshold = n ?? Math.max(1, Math.floor(queueLimit() / 2))
}

/** Never watched or reported: hidden names (`.git`, temporary files of atomic writes) and installed packages. */
function ignored (name: string): boolean {
  return name.startsWith('.') || name === 'node_modules'
}

/** Folders of one tree listed at once (10,000 at once peaked at 300 MB). */
const LIST_CONCURRENCY = 8

/** A running watch over one folder and every folder below it. */
export class FolderWatch {
  readonly #root: string
  readonly #opts: FolderWatchOptions
  readonly #dirs = new Map<string, FSWatcher>()
  /** Folders being looked at again after an event (`again`: another event came meanwhile). */
  readonly #syncing = new Map<string, { again: boolean, self: boolean }>()
  /** A folder's subfolders are added outside this bound. */
  readonly #listing = pLimit(LIST_CONCURRENCY)
  readonly #pace = listingPace()
  #closed = false

  constructor (root: string, opts: FolderWatchOptions) {
    this.#root = root
    this.#opts = opts
  }

  /**
   * Watches the root (an existing folder) and every folder below it (hidden ones and `node_modules` excepted).
   * @returns the watch, once every folder found is watched (changes made from then on are told)
   */
  async start (): Promise<this> {
    const signal = this.#opts.signal
    if (signal?.aborted === true) return this
    signal?.addEventListener('abort', () => { this.close() }, { once: true })
    live.add(this)
    await this.#add(this.#root, false)
    return this
  }

  /** Stops every watch of the tree (synchronously). */
  close (): void {
    this.#closed = true
    live.delete(this)
    for (const w of this.#dirs.values()) w.close()
    this.#dirs.clear()
  }

  lost (): void {
    if (!this.#closed) this.#opts.onLost()
  }

  /** Watches a folder, then lists it (so what appears after is an event) and adds its folders; `report`: tell each file found. */
  async #add (dir: string, report: boolean): Promise<void> {
    if (this.#closed || this.#dirs.has(dir)) return
    let watcher: FSWatcher
    try {
      watcher = watch(dir, { persistent: false }, (type, name) => { this.#event(dir, type, name) })
    } catch (err) {
      // Gone already (its parent's event tells), or not a folder: nothing to watch.
      const code = (err as NodeJS.ErrnoException).code
      if (code !== 'ENOENT' && code !== 'ENOTDIR') this.#opts.onError?.(err as Error)
      return
    }
    watcher.on('error', (err) => {
      // Node closes a watch that failed: the owner re-checks everything, the folder is watched again.
      if (this.#dirs.get(dir) === watcher) this.#dirs.delete(dir)
      this.#opts.onError?.(err)
      this.lost()
      if (!this.#closed) this.#sync(dir)
    })
    this.#dirs.set(dir, watcher)
    const folders = await this.#listing(async () => await this.#list(dir, report))
    if (folders === null) return
    await Promise.all(folders.map(async folder => {
      if (report) this.#opts.onPath(folder)
      await this.#add(folder, report)
    }))
  }

  /** Lists a folder once its watch is set: its subfolders, or null when it is gone. */
  async #list (dir: string, report: boolean): Promise<string[] | null> {
    if (this.#closed) return null
    const folders: string[] = []
    try {
      await listFolder(dir, this.#pace, e => {
        if (this.#closed) return false
        if (ignored(e.name)) return
        // Links are not followed (the readers never follow a link out of a folder either).
        if (e.isDirectory()) folders.push(path.join(dir, e.name))
        else if (report) this.#opts.onPath(path.join(dir, e.name))
      })
    } catch {
      return null
    }
    if (this.#closed) return null
    return folders
  }

  #event (dir: string, type: string, name: string | Buffer | null): void {
    countEvent()
    if (this.#closed) return
    if (name === null) {
      // No name: anything in the folder may have changed.
      this.#opts.onPath(dir)
      this.#sync(dir, true)
      return
    }
    const base = String(name)
    if (ignored(base)) return
    const full = path.join(dir, base)
    this.#opts.onPath(full)
    // A name appeared, went away or was renamed: it may be a folder to watch or to let go.
    if (type !== 'rename') return
    this.#sync(full)
    // The folder itself deleted or moved: libuv names it by its own base name.
    if (base === path.basename(dir)) this.#sync(dir, true)
  }

  /** Looks at a path again after a rename event, one look at a time; `self`: from its own watch (a folder still there is kept). */
  #sync (full: string, self = false): void {
    const running = this.#syncing.get(full)
    if (running !== undefined) { running.again = true; running.self &&= self; return }
    const state = { again: false, self }
    this.#syncing.set(full, state)
    void (async () => {
      try {
        do {
          state.again = false
          self = state.self
          state.self = true
          let isDir = false
          // The root may be a link to a folder (watched through it); a link below is never followed.
          try { isDir = ((full === this.#root ? statSync : lstatSync)(full, { throwIfNoEntry: false })?.isDirectory()) === true } catch {}
          if (this.#closed) return
          // A folder replaced or gone: its watches go (a new one at that path is watched afresh).
          if (full === this.#root) {
            if (!isDir) { this.#unwatch(full); this.lost() }
          } else if (this.#dirs.has(full) && !(self && isDir)) {
            this.#unwatch(full)
          }
          if (isDir && !this.#dirs.has(full)) await this.#add(full, true)
        } while (state.again && !this.#closed)
      } catch (err) {
        this.#opts.onError?.(err as Error)
      } finally {
        this.#syncing.delete(full)
      }
    })()
  }

  /** Stops watching a folder and every folder below it. */
  #unwatch (dir: string): void {
    const below = dir + path.sep
    for (const [d, w] of this.#dirs) {
      if (d === dir || d.startsWith(below)) { w.close(); this.#dirs.delete(d) }
    }
  }
}
