/**
 * The in-memory index of one collection: every entry's parsed data, revision, search text and
 * sort key. It is built once (on first use), kept fresh by the file watcher, and checked cheaply
 * on read (a stat of the page's files and of the directory), so no request reads every file.
 * A Markdown body is the bulk of an entry and only the entries a read returns need it: the index
 * keeps where it starts and reads it back from the file (whose signature it checks) on demand.
 * The rows are persisted (`index-snapshot.ts`): a restart stats every file and reads only those
 * whose signature differs from the snapshot's.
 */
import { lstatSync, readFileSync, statSync } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import path from 'node:path'
import { BadRequestError, ForbiddenError, type ValidationIssue } from '../errors.js'
import type { EntryData, EntryFormat } from '../content/formats.js'
import type { Collection } from './collection-registry.js'
import { readEntryFile, signatureSize, statEntryFile, statEntryFileNow as statNow } from './entry-file.js'
import { readTextIfUnchanged } from './entry-text.js'
import { WrittenTexts } from './written-texts.js'
import { rowContent, StoredRow, type IndexRow, type RowContent, type RowHome, type RowRules } from './index-row.js'
import { readTableInWorker } from './index-reader.js'
import { candidateFiles, defaultFileOf, defaultFileParts, formatOfFile, idLayoutProblem, idOfPath, isDefaultFile, isMarkdownLike, newFileOf, realPathOf, resolvesInside, scanLayout, type EntryLayout } from './entry-paths.js'
import { isInside, relativeBelow } from './safe-path.js'
import type { RevisionLog, RevisionState } from './revision-log.js'
import { carriedStates, folderSignature, logDigest, RACY_MS, signatureCtime, snapshotFolder, type CarriedStates, type IndexSnapshot } from './index-snapshot.js'
import type { RowTable } from './row-table.js'
import { SIG_DIFFERS, SIG_SAME, SIG_SAME_RACY, SIG_UNKNOWN, STAT_CHUNK } from './stat-one.js'
import { startStatPass, startWaitingStatWorker, statInWorker, type PackedFiles, type StatPass } from './stat-files.js'

export type { IndexRow }

/** One entry with all its data (a Markdown body included), as reads return it. */
export interface IndexedEntry {
  id: string
  file: string
  sig: string
  revision: number
  data?: EntryData
  readError?: { message: string }
  validationIssues?: ValidationIssue[]
  title: string
  order: number | null
}

type RevisionChange = { id: string } & RevisionState

export interface IndexOptions {
  collection: Collection
  repoRealDir: string
  log: RevisionLog
  /**
   * Returns the validation issues of data against the collection's schema (the index worker,
   * which builds the first index, checks against `collection.schema` itself: the same check).
   */
  validate: (data: EntryData) => ValidationIssue[]
  /** Told of every entry change the index takes (data; undefined: unreadable; null: gone): the full-text search (lib/search/). */
  onEntryChange?: (id: string, data: EntryData | undefined | null) => void
  /** Where the rows are persisted between runs; null: nowhere (always built from the files). */
  snapshot?: IndexSnapshot | null
  /**
   * Resolves once the file watcher sees changes. A build that starts before lists and stats the
   * files at once, beside the watcher's walk, and once the watcher listens checks every file again
   * (`caughtUp`), so a change made in between is never missed.
   */
  watching?: Promise<void>
  /**
   * True once the watcher listens (a build then needs no second check); false after `watching`
   * resolved means it never will (the store closed first): no second check is made. Default false.
   */
  isWatching?: () => boolean
  /** From how many files a restart's stat passes run in a worker (default STAT_WORKER_MIN_FILES). */
  statWorkerMinFiles?: number
}

const LOAD_CONCURRENCY = 64
/**
 * From this many files on, a restart stats them in a worker thread while this one parses the
 * snapshot (below it, the worker's start costs about what the stats do). Was 4,000: at 10,000
 * files the worker (its code cold, 7-10 microseconds per file at first) posted its first chunk 40-46 ms
 * after it got the files, and this thread, done with its own chunk, waited for it; stat-ing all
 * 10,000 here costs it ~25 ms more CPU and no wait, and the process ~85 ms less CPU (issue 18, y1).
 */
const STAT_WORKER_MIN_FILES = 16_384
/**
 * The stat worker starts before the folder scan only for a snapshot of at least
 * STAT_WORKER_MIN_FILES times this many bytes (a record with a title and a few fields: the scale
 * bench's take ~180). Was 40, fewer than any record takes: a worker started early for a smaller
 * collection was ended unused, and it took the spare worker the full-text index would have used
 * (issue 18, y1: 10,000 of the bench's rows are 1.8 MB). A larger collection of smaller records
 * starts its worker after the scan, as before the early start.
 */
const EARLY_WORKER_RECORD_BYTES = 160

/** Fewer bytes than any snapshot record takes (hash, order, signature, id): a bound on the rows a snapshot file can hold. */
const MIN_RECORD_BYTES = 40

/** A file's size, 0 when it cannot be stat-ed. */
function snapshotBytes (file: string): number {
  try { return statSync(file).size } catch { return 0 }
}

/**
 * A snapshot this large is read back after a write only when every row written was parsed (a
 * build from the files), not to take a few saved rows onto it (see `#adopt`).
 */
const ADOPT_PARTIAL_MAX_BYTES = 256 * 1024

/**
 * A snapshot's carried revision states are used only while the log is at most this many bytes plus
 * CARRY_LOG_BYTES_PER_ROW per state: a log that grew past it (many saves since its last
 * compaction) is parsed, which compacts it.
 */
const CARRY_MAX_LOG_BYTES = 1024 * 1024
const CARRY_LOG_BYTES_PER_ROW = 200

/** How long after a change the snapshot is written again (it is also written on close). */
const SNAPSHOT_DELAY_MS = 60_000

/** The index of one collection. */
export class CollectionIndex {
  readonly collection: Collection
  readonly #opts: IndexOptions
  readonly #entries = new Map<string, StoredRow>()
  readonly #dirty = new Set<string>()
  /**
   * The last known state of every entry without a row (deleted ones) and of rows whose state is
   * not yet their own; a row's revision and signature are its state (one object per entry, not two).
   */
  #states = new Map<string, RevisionState>()
  #revisionSum = 0
  #sorted: StoredRow[] | null = null
  #dirMtime = -1
  /** Set by the watcher when something changed that no single entry explains (a folder). */
  #rescan = false
  /** Set when the watcher may have lost events: every row is re-checked on the next list. */
  #allChanged = false
  /** The last scan's ids whose file is not known to be their default one (`LayoutScan.others`). */
  #scanOthers = new Set<string>()
  /** Ids that are listed unreadable whatever their file holds (a bad file name, two files). */
  #problems = new Map<string, string>()
  /**
   * The folder's signature (`folderSignature`) taken before the last scan, when that scan found a
   * flat folder of default files only, no problem, changed at least RACY_MS before it; else null.
   */
  #scannedFolder: string | null = null
  /** Whether the last build listed the folder (see `listedFolder`). */
  #listedFolder = true
  /** Files a rescan found for ids about to be re-checked. */
  readonly #pendingFiles = new Map<string, string>()
  /** Entries whose file the service is replacing or removing right now: settled when recorded. */
  readonly #writing = new Map<string, Promise<void>>()
  #loading: Promise<void> | null = null
  readonly #layout: EntryLayout
  /** Gives the rows the file of an id, which they do not keep when it is the default one. */
  readonly #home: RowHome
  /**
   * Ids whose row was read when its file's ctime was within RACY_MS of the read: the file may have
   * changed again in the same timestamp tick, so these rows are never persisted.
   */
  readonly #racy = new Set<string>()
  /** Rows changed since the snapshot was written (or no snapshot matches the rows). */
  #snapshotStale = false
  #snapshotTimer: NodeJS.Timeout | null = null
  #snapshotWrite: Promise<void> = Promise.resolve()
  /** How the last build went: entries taken from the snapshot and entries read from their files. */
  #loadStats = { fromSnapshot: 0, read: 0 }
  /** Whether the last build took the revision states from the snapshot (not the log). */
  #statesCarried = false
  /** Set once the first build is done. */
  #built = false
  /** The check of every file once the watcher listens (see `caughtUp`). */
  #caughtUp: Promise<void> = Promise.resolve()
  /** The repository's `.git` folder, real path (checked against at every save). */
  readonly #gitReal: string

  constructor (opts: IndexOptions) {
    this.collection = opts.collection
    this.#opts = opts
    this.#gitReal = path.join(opts.repoRealDir, '.git')
    const { dir, format, nested, indexFile, files } = opts.collection
    this.#layout = { dir, format, nested, indexFile, files }
    const layout = this.#layout
    this.#home = { defaultFile: id => defaultFileOf(layout, id), isDefaultFile: (id, file) => isDefaultFile(layout, id, file) }
  }

  /**
   * Refuses an id this collection cannot hold (a `/` in a flat collection, an id that is not one
   * of a `files` collection's, a path through a link leaving the folder); 400, before any entry
   * file is touched. `checkFolder` checks the folder itself.
   * @param id a valid entry id (grammar already checked)
   */
  checkId (id: string): void {
    const problem = idLayoutProblem(this.#layout, id)
    if (problem !== null) throw new BadRequestError(`Invalid entry id: it ${problem}`, { field: 'id' })
    // A path below the folder must not pass through a link that leaves it.
    if (id.includes('/') && !resolvesInside(this.#folderReal(), path.join(this.collection.dir, id))) {
      throw new BadRequestError('The entry path leaves the collection folder', { field: 'id' })
    }
  }

  /**
   * Takes a file event from the watcher: the entry it belongs to is re-checked on next read;
   * anything else under the folder (a folder, another file of a bundle) asks for a rescan.
   * @param file absolute path that changed
   */
  onFileEvent (file: string): void {
    const rel = relativeBelow(this.collection.dir, file) ?? path.relative(this.collection.dir, file)
    if (rel === '' || !isInside(this.collection.dir, file)) { if (rel === '') this.#rescan = true; return }
    const segments = rel.split(path.sep)
    // Hidden names (temporary files of atomic writes among them) are never entries.
    if (segments.some(s => s.startsWith('.') || s === 'node_modules')) return
    const id = idOfPath(this.#layout, rel)
    if (id === null) {
      // A flat folder's own mtime tells additions and removals; a deep one needs a rescan.
      if (this.#layout.files === null && (this.#layout.nested || this.#layout.indexFile !== null)) this.#rescan = true
      return
    }
    const known = this.#entries.get(id)
    // Another file for a known id: it may be a second file for one id.
    if (known !== undefined && !known.hasFile(file)) this.#rescan = true
    this.#dirty.add(id)
  }

  /**
   * Builds the index on first use.
   * @returns resolves when every entry is indexed
   */
  async ready (): Promise<void> {
    // A failed build (its folder refused) is tried again on the next request.
    this.#loading ??= this.#load().catch((err: unknown) => { this.#loading = null; throw err })
    return await this.#loading
  }

  /**
   * Marks every entry as possibly changed on disk (the watcher may have lost events): the next
   * list scans the folder and re-checks every file (one built meanwhile included).
   */
  markAllChanged (): void {
    this.#rescan = true
    this.#allChanged = true
  }

  /**
   * Marks an entry as possibly changed on disk (from the watcher); it is re-checked on next read.
   * @param id entry id, or null when the directory itself changed
   */
  markDirty (id: string | null): void {
    if (id === null) this.#rescan = true
    else this.#dirty.add(id)
  }

  /**
   * All entries in list order, fresh with respect to the directory and the watcher.
   * @returns the sorted rows (do not mutate); `freshen` gives their full data
   */
  async all (): Promise<readonly IndexRow[]> {
    this.checkFolder()
    await this.ready()
    if (this.#allChanged) {
      this.#allChanged = false
      this.#rescan = true
      for (const id of this.#entries.keys()) this.#dirty.add(id)
    }
    await this.#refreshDirectory()
    if (this.#dirty.size > 0) {
      const ids = [...this.#dirty]
      this.#dirty.clear()
      await Promise.all(ids.map(async id => await this.#refresh(id)))
    }
    this.#sorted ??= [...this.#entries.values()].sort(this.#compare)
    return this.#sorted
  }

  /**
   * One entry, re-checked against its file first.
   * @param id a valid entry id
   * @param opts `folderChecked`: the caller checked this entry's path with `fileOf` just before (a
   *   writer: its check then precedes both its read and its write), so the folder is not checked
   *   again here
   * @returns the entry, or null when it does not exist
   */
  async get (id: string, opts: { folderChecked?: boolean } = {}): Promise<IndexedEntry | null> {
    if (opts.folderChecked !== true) this.checkFolder()
    this.checkId(id)
    await this.ready()
    // The watcher saw a change no single entry explains (a second file for an id, a folder).
    if (this.#rescan) await this.#refreshDirectory()
    this.#dirty.delete(id)
    return await this.#fresh(id)
  }

  /**
   * Re-checks the given entries against their files (the cheap check for a page of results) and
   * gives them with all their data.
   * @param rows entries about to be returned
   * @returns the same entries, fresh (dropping any deleted meanwhile)
   */
  async freshen (rows: readonly IndexRow[]): Promise<IndexedEntry[]> {
    const fresh = await Promise.all(rows.map(async e => await this.#fresh(e.id)))
    return fresh.filter((e): e is IndexedEntry => e !== null)
  }

  /**
   * The revision an entry has, or had before it was deleted (0 when it never existed).
   * @param id entry id
   * @returns the revision number
   */
  lastRevision (id: string): number {
    return this.#entries.get(id)?.revision ?? this.#states.get(id)?.rev ?? 0
  }

  /**
   * The collection's revision: it increases with every change to any of its entries (the sum of
   * their revisions, deleted entries included), so it needs no storage of its own.
   * @returns the revision (0 for a collection that never had an entry)
   */
  get revision (): number {
    return this.#revisionSum
  }

  /**
   * Records a write the service made (file already replaced on disk).
   * @param id entry id
   * @param data the data written
   * @param written the file (as `fileOf` gave it for this write) and the text written into it, when
   *   the caller has them: the text tells where a Markdown body starts without reading it back;
   *   `issues`: the data's validation issues when the caller validated it with the service's
   *   compiler (the row takes them instead of validating again)
   * @returns the entry's new revision
   */
  async recordWrite (id: string, data: EntryData, written?: { file: string, text: string, issues?: ValidationIssue[] }): Promise<number> {
    const file = written?.file ?? this.fileOf(id)
    const readAt = Date.now()
    const sig = await statEntryFile(this.#opts.repoRealDir, file)
    if (sig === null || sig === 'link-outside') throw new Error(`entry file vanished after write: ${file}`)
    const rev = this.lastRevision(id) + 1
    await this.#opts.log.append([{ id, rev, sig }])
    this.#setState(id, { rev, sig })
    // The text just written tells where the body starts (read back when the file is not that size),
    // and is kept for the entry's next save while the file keeps this signature.
    const rules = this.#rules(file)
    const asWritten = written !== undefined && Buffer.byteLength(written.text, 'utf8') === signatureSize(sig)
    if (asWritten) writtenTexts.remember(file, sig, written.text)
    else writtenTexts.forget(file)
    const text = !isMarkdownLike(rules.format)
      ? null
      : asWritten ? written.text : await readTextIfUnchanged(file, sig)
    this.#problems.delete(id)
    const issues = written?.issues
    this.#store(id, file, sig, rev, rowContent(id, data, text, rules, issues !== undefined ? () => issues : this.#opts.validate), readAt)
    this.#opts.onEntryChange?.(id, data)
    return rev
  }

  /**
   * Runs the service's own change of an entry's file (write or removal, then `recordWrite` or
   * `recordDelete`). Until it settles, a read that meets the new file waits for it instead of taking
   * it for an outside change, which would spend a revision of its own before the service's.
   * @param id entry id
   * @param change writes the file and records it
   * @returns what `change` returns
   */
  async serviceChange<T> (id: string, change: () => Promise<T>): Promise<T> {
    let settle = (): void => {}
    const done = new Promise<void>(resolve => { settle = resolve })
    this.#writing.set(id, done)
    try {
      return await change()
    } finally {
      if (this.#writing.get(id) === done) this.#writing.delete(id)
      settle()
    }
  }

  /**
   * Records a deletion the service made (file already removed).
   * @param id entry id
   * @returns the revision the deletion produced
   */
  async recordDelete (id: string): Promise<number> {
    const rev = this.lastRevision(id) + 1
    await this.#opts.log.append([{ id, rev, sig: null }])
    this.#setState(id, { rev, sig: null })
    this.#remove(id)
    return rev
  }

  /**
   * The file path an entry has or would have, checked now the way a writer needs: its real path
   * (links resolved; a missing file through its nearest existing parent) is inside the collection
   * folder's, which is inside the repository, and outside `.git` (a folder may hold `.git`: the
   * repository's root). So a writer needs no `assertRealInside` of its own (issue 18: one
   * `realpath` of the file per save instead of two).
   * @param id a valid entry id
   * @returns absolute path
   */
  fileOf (id: string): string {
    this.checkId(id)
    const file = this.pathOf(id)
    if (file === null) throw new BadRequestError('Invalid entry id: it is not one of the collection\'s files', { field: 'id' })
    const folderReal = this.#folderReal()
    const real = path.dirname(file) === this.collection.dir ? realPathInFolder(folderReal, file) : realPathOf(file)
    if (real === null || !isInside(folderReal, real)) throw new BadRequestError('The entry path leaves the collection folder', { field: 'id' })
    if (isInside(this.#gitReal, real)) throw new ForbiddenError('Path is inside .git')
    return file
  }

  /**
   * The file path `fileOf` would give now, without any check (to tell whether a path it gave a
   * moment ago is still the entry's).
   * @param id a valid entry id
   * @returns absolute path, or null when the id is not one of a `files` collection's
   */
  pathOf (id: string): string | null {
    return this.#entries.get(id)?.file ?? newFileOf(this.#layout, id)
  }

  /**
   * The format a file of this collection is read and written with (a Markdown collection holds
   * `.md` and `.mdx` files alike).
   * @param file an entry file
   * @returns its format
   */
  formatOf (file: string): EntryFormat {
    return formatOfFile(file, this.collection.format)
  }

  /**
   * Collections with fewer files are read in this thread, not in a worker. Measured on the CI
   * machine (built code, md files of 2 KiB): starting a worker and reading 10 files took 330 ms,
   * 200 files 530 ms; reading them in this thread took 19 ms and 177 ms. Below ~300 files the
   * worker's start costs more than the reading, and the garbage the worker keeps out of this heap
   * (the reason for it, see docs/ARCHITECTURE.md) is small. Under the tests' TypeScript loader a
   * worker start cost ~0.6 s per collection.
   */
  static readonly #INLINE_MAX_FILES = 200
  /** From this many files on, the reading is shared between workers (one per core). */
  static readonly #SPLIT_MIN_FILES = 20_000

  get #statWorkerMinFiles (): number {
    return this.#opts.statWorkerMinFiles ?? STAT_WORKER_MIN_FILES
  }

  async #load (): Promise<void> {
    this.checkFolder()
    // The snapshot and the revision log's bytes are read (thread pool) beside the folder scan; the
    // stat pass over the snapshot's records starts once the snapshot is read, before the scan ends
    // (issue 18, restart: anything before the stat pass delays the longest part of a restart).
    const snapshotReading = this.#opts.snapshot?.read() ?? Promise.resolve(null)
    // The log's bytes, read beside the snapshot for the carried states (one read in the thread pool).
    const logReading = this.#opts.snapshot != null ? this.#readLog() : Promise.resolve(null)
    // Listed and stat-ed at once, beside the watcher's walk (0.35 s of its own thread at 100,000
    // files): what changes before the watcher listens is found by `#catchUp` (issue 18, restart).
    const watching = this.#opts.watching
    const live = watching === undefined || this.#opts.isWatching?.() === true
    // A snapshot large enough for the stat worker: the worker starts now, its start beside the scan.
    const early = this.#opts.snapshot != null && snapshotBytes(this.#opts.snapshot.file) >= this.#statWorkerMinFiles * EARLY_WORKER_RECORD_BYTES ? startWaitingStatWorker() : null
    const scanAt = Date.now()
    // Before any stat: a file changed that close to it is racy.
    const statAt = Date.now()
    const snapshot = await snapshotReading
    // A snapshot whose folder signature is the folder's now lists exactly its files: no scan (issue
    // 18, ninth pass: the listing of 100,000 names, their per-name work and garbage, ~0.2-0.3 s of
    // this thread). Else the folder scan runs beside the stat pass over the snapshot's files
    // (eighth pass: the stats do not wait for the scan).
    const unscanned = snapshot !== null && this.#folderUnchanged(snapshot)
    let scanned = unscanned
    const scanning = unscanned ? Promise.resolve(null) : this.#scanDirectory().finally(() => { scanned = true })
    scanning.catch(() => {})
    // The record ids, in record order (the rows taken keep these strings), and the pass over their files.
    let recordIds: string[] | null = null
    let pass: StatPass | null = null
    if (snapshot !== null && snapshot.size >= this.#statWorkerMinFiles) {
      const files = this.#recordFiles(snapshot, statAt)
      pass = early?.pass(files) ?? startStatPass(files)
      recordIds = snapshot.ids()
      // This thread's share of the pass while the scan's `readdir` is under way.
      await pass.helpWhile(() => !scanned)
    } else {
      early?.end()
    }
    let foundMap: Map<string, string> | null
    try {
      foundMap = await scanning
    } catch (err) {
      pass?.end()
      throw err
    }
    const scannedMtime = this.#dirMtime
    const others = this.#scanOthers
    const { states, carried } = await this.#loadStates(snapshot, logReading)
    this.#statesCarried = carried
    this.#states = states
    for (const state of this.#states.values()) this.#revisionSum += state.rev
    // Carried: the snapshot's records hold every other entry's revision.
    if (carried) for (let at = 0; at < snapshot!.size; at++) this.#revisionSum += snapshot!.rev(at)
    const pending: RevisionChange[] = []
    // Entries whose file still has the signature the snapshot recorded are taken from it; every
    // other file is read. Any difference at all (a file added, removed, renamed, changed) shows.
    let ids: Array<[string, string]>
    if (snapshot === null) {
      ids = [...foundMap!]
    } else {
      const took = await this.#takeFromSnapshot(snapshot, recordIds ?? snapshot.ids(), foundMap, others, pending, pass, statAt, carried)
      ids = took.toRead
      foundMap = took.found
    }
    const foundCount = foundMap?.size ?? snapshot!.size
    this.#listedFolder = foundMap !== null
    // The rows are taken: a large snapshot's bytes stay in the file (read back per row on first
    // use), once the first request waiting for this build has been served (a timer: an immediate
    // ran before that request's answer, which waits for its page's file reads; 5-15 ms of this
    // thread at 10,000 and 100,000 entries, issue 18, ninth pass).
    if (snapshot !== null) setTimeout(() => { snapshot.release() }, RELEASE_AFTER_MS).unref()
    this.#loadStats = { fromSnapshot: foundCount - ids.length, read: ids.length }
    // Anything read from files (or a snapshot that lists a file no longer there) makes a new
    // snapshot; so does a scan that found the folder's signature other than the snapshot's, so that
    // the next start needs no scan.
    if (snapshot === null || ids.length > 0 || snapshot.size !== foundCount - ids.length) this.#snapshotStale = true
    else if (foundMap !== null && this.#scannedFolder !== null && snapshotFolder(snapshot) !== this.#scannedFolder) this.#snapshotStale = true
    let read: Array<{ table: RowTable, odd: IndexRow[] }> | null = null
    const readAt = Date.now()
    if (ids.length >= CollectionIndex.#INLINE_MAX_FILES) {
      try {
        // A large collection is read by as many workers as there are cores (each takes a share).
        const workers = ids.length >= CollectionIndex.#SPLIT_MIN_FILES ? Math.max(1, Math.min(4, availableParallelism())) : 1
        const share = Math.ceil(ids.length / workers)
        read = await Promise.all(Array.from({ length: workers }, async (_, i) => await readTableInWorker({
          repoRealDir: this.#opts.repoRealDir,
          files: ids.slice(i * share, (i + 1) * share),
          rules: this.#rules(),
          schema: this.collection.schema,
          layout: this.#layout
        })))
      } catch {
        // No worker (or it failed): read in this thread.
      }
    }
    if (read !== null) {
      for (const { table, odd } of read) {
        // Lazy rows, as from a snapshot: the content stays in the worker's buffer until used.
        for (let at = 0; at < table.size; at++) {
          const id = table.id(at)
          const { rev, sig, change } = this.#revise(id, table.sig(at))
          if (change !== null) pending.push(change)
          const problem = this.#problems.get(id)
          const row = problem !== undefined
            ? new StoredRow(this.#home, id, table.file(at), sig, rev, { message: problem })
            : StoredRow.lazy(this.#home, id, table.file(at), rev, table.order(at), table, at)
          this.#put(row, readAt, sig)
        }
        for (const row of odd) {
          const problem = this.#problems.get(row.id) ?? row.readError?.message
          const { rev, sig, change } = this.#revise(row.id, row.sig)
          if (change !== null) pending.push(change)
          const content: RowContent | { message: string } = problem !== undefined
            ? { message: problem }
            : { fields: row.fields ?? {}, bodyAt: row.bodyAt, validationIssues: row.validationIssues, title: row.title, order: row.order }
          this.#put(new StoredRow(this.#home, row.id, row.file, sig, rev, content), readAt)
        }
      }
    } else {
      for (let i = 0; i < ids.length; i += LOAD_CONCURRENCY) {
        await Promise.all(ids.slice(i, i + LOAD_CONCURRENCY).map(async ([id, file]) => {
          const change = (await this.#index(id, file))?.change ?? null
          if (change !== null) pending.push(change)
        }))
      }
    }
    // Files deleted while the service was down: their deletion is a change too.
    for (const [id, state] of [...this.#states]) {
      if (state.sig !== null && !this.#entries.has(id)) {
        const rev = state.rev + 1
        this.#setState(id, { rev, sig: null })
        pending.push({ id, rev, sig: null })
      }
    }
    await this.#opts.log.append(pending)
    // A map keeps its size after deletions: a fresh one holds only the states rows do not.
    this.#states = new Map(this.#states)
    this.#built = true
    if (!live) this.#caughtUp = this.#catchUp(watching, scanAt - scannedMtime, pass, recordIds, ids)
    else pass?.end()
    // Written at once after a build, so a process killed soon after still starts fast next time.
    if (this.#snapshotStale) this.#scheduleSnapshot(0)
  }

  /**
   * Resolves once every change made between a build's stat of the files and the moment the watcher
   * began to listen has been noticed (its entries marked for a re-check on the next read). A build
   * that started after the watcher listened needs no such check.
   * @returns resolves when done (never rejects)
   */
  get caughtUp (): Promise<void> {
    return this.#caughtUp
  }

  /**
   * Once the watcher listens, every change is an event; what changed between the build's stat of a
   * file and then is found here: each row's file is stat-ed again (in the stat worker for a large
   * collection) and any other signature marks it dirty. An add or a removal changes the folder's
   * mtime, which each list compares with the one taken before the scan; a folder changed within
   * RACY_MS of that scan, or a nested or bundled layout (whose deeper folders no list stats), is
   * scanned again on the next read.
   * @param folderAge how old the folder's mtime was when the build stat-ed it, before its scan
   * @param pass the build's stat worker, which stats the snapshot's files again (null: stat each row here)
   * @param passIds the ids of the pass's files, in its order (the snapshot's records)
   * @param read the files the build read instead of taking their row from the snapshot (stat-ed
   *   here, or in a worker when many, and compared with their rows)
   */
  async #catchUp (watching: Promise<void>, folderAge: number, pass: StatPass | null, passIds: readonly string[] | null, read: Array<[string, string]>): Promise<void> {
    await watching
    if (this.#opts.isWatching?.() === false) { pass?.end(); return }
    try {
      const layout = this.#layout
      if (layout.files !== null || layout.nested || layout.indexFile !== null || !(folderAge >= RACY_MS)) this.#rescan = true
      const changed = pass === null || passIds === null ? null : await pass.again().catch(() => null)
      // The pass covered the snapshot's records; the files read instead are checked against their rows.
      if (changed !== null) for (const i of changed) this.#dirty.add(passIds![i]!)
      const toCheck: Array<[string, string]> = changed !== null
        ? read
        : [...this.#entries.values()].map(row => [row.id, row.file])
      // No first pass to compare with (a build from the files): a large collection's rows are
      // stat-ed in a worker all the same, a small one's here.
      const sigs = toCheck.length >= this.#statWorkerMinFiles ? await statInWorker(toCheck.map(entry => entry[1])).catch(() => null) : null
      for (let i = 0; i < toCheck.length; i++) {
        if (sigs === null && i % 4096 === 4095) await new Promise(resolve => setImmediate(resolve))
        const [id, file] = toCheck[i]!
        let sig = sigs?.[i]
        if (sig === undefined) {
          try { sig = statNow(this.#opts.repoRealDir, file) } catch { sig = null }
        }
        // A file read since gone, changed, or back (no row: it was missing when read).
        const row = this.#entries.get(id)
        if (row === undefined ? sig !== null : sig !== row.sig) this.#dirty.add(id)
      }
    } catch {
      // Folder refused meanwhile: the next read reports it; rescan to be sure.
      this.#rescan = true
    }
  }

  /**
   * Puts the snapshot's rows whose file is unchanged into the index, as lazy rows (their content
   * stays in the snapshot's buffer until used), in the snapshot's order (the list order it was
   * written in: the first list's sort then finds them sorted). A record is taken only when the scan
   * found its id with the very file the record names and that file's signature is the record's.
   * @param ids the records' ids, in record order
   * @param found the scan's files by id; null when the folder was not scanned (its signature is the
   *   snapshot's: the records are its files): then, when any record is not taken, it is scanned here
   * @param others the scan's ids whose file is not known to be their default one (`LayoutScan.others`)
   * @param pass the stat worker's pass over the records' files, in record order (null: stat them
   * here); its results are taken a chunk at a time as the worker posts them
   * @param statAt when the pass's stats began
   * @returns the files still to read (found, and not taken), and the scan's files (null: not scanned)
   */
  async #takeFromSnapshot (snapshot: RowTable, ids: readonly string[], scan: Map<string, string> | null, others: ReadonlySet<string>, pending: RevisionChange[], pass: StatPass | null, statAt: number, carried: boolean): Promise<{ toRead: Array<[string, string]>, found: Map<string, string> | null }> {
    let found = scan
    const size = snapshot.size
    const taken = new Uint8Array(size)
    let takenCount = 0
    const sigs = pass?.results ?? []
    const flags = pass?.flags ?? null
    // The worker's results of the chunk about to be taken (false once it failed: the rest is
    // stat-ed here). `chunkAt` is taken before any stat this thread makes in the chunk.
    let workerOk = pass !== null
    let chunkAt = Date.now()
    for (let at = 0; at < size; at++) {
      if (at % STAT_CHUNK === 0) {
        if (workerOk) workerOk = await pass!.ready(at + STAT_CHUNK)
        chunkAt = Date.now()
      }
      // Requests for other collections go on meanwhile (a stat of 100,000 files takes a while).
      if (at % STAT_CHUNK === STAT_CHUNK - 1) await new Promise(resolve => setImmediate(resolve))
      const id = ids[at]!
      const own = snapshot.file(at)
      // Not scanned: the record's file is there (the stat says whether it changed).
      let file = found === null ? own ?? undefined : found.get(id)
      if (found !== null) {
        // Gone (or another file for it, or a problem): not taken; carried, the record is its last known state.
        if (file === undefined || this.#problems.has(id)) { this.#carryRecord(snapshot, at, id, carried); continue }
        // The scan tells which files are their id's default one (no path compared for those).
        if (own === null ? others.has(id) && !isDefaultFile(this.#layout, id, file) : own !== file) { this.#carryRecord(snapshot, at, id, carried); continue }
      }
      // A packed pass tells how each file compares with its record (no string): the common case.
      const flag = flags === null || !workerOk ? SIG_UNKNOWN : flags[at]!
      if (flag === SIG_SAME || flag === SIG_SAME_RACY) {
        const known = this.#states.get(id)
        if (known === undefined ? carried : known.sig !== null && snapshot.sigEquals(at, known.sig)) {
          // Carried with no other state, or the logged state has this very signature.
          this.#put(StoredRow.lazy(this.#home, id, own, known?.rev ?? snapshot.rev(at), snapshot.order(at), snapshot, at), statAt, known?.sig ?? undefined, flag === SIG_SAME_RACY)
          taken[at] = 1
          takenCount++
          continue
        }
      }
      if (flag === SIG_DIFFERS) { this.#carryRecord(snapshot, at, id, carried); continue }
      // A result of the worker's was stat-ed after statAt; one of this thread's after chunkAt.
      let sig = flag === SIG_SAME || flag === SIG_SAME_RACY ? snapshot.sig(at) : sigs[at]
      let readAt = statAt
      if (sig === undefined) {
        readAt = chunkAt
        file ??= defaultFileOf(this.#layout, id) ?? undefined
        try { sig = file === undefined ? null : statNow(this.#opts.repoRealDir, file) } catch { sig = null }
      }
      if (sig === null || !snapshot.sigEquals(at, sig)) { this.#carryRecord(snapshot, at, id, carried); continue }
      // The common case without `#revise`'s object: the logged state has this very signature (or,
      // carried, the record holds the state: no other state is known for an id with a record).
      const known = this.#states.get(id)
      let rev: number
      if (carried && known === undefined) {
        rev = snapshot.rev(at)
      } else if (known !== undefined && known.sig === sig) {
        rev = known.rev
        sig = known.sig
      } else {
        const revised = this.#revise(id, sig)
        if (revised.change !== null) pending.push(revised.change)
        rev = revised.rev
        sig = revised.sig
      }
      // The signature stays in the snapshot's bytes (it is the same: its string is not kept).
      this.#put(StoredRow.lazy(this.#home, id, own, rev, snapshot.order(at), snapshot, at), readAt, sig)
      taken[at] = 1
      takenCount++
    }
    // Not scanned and every record taken (the common restart): nothing to read.
    if (found === null && takenCount === size) return { toRead: [], found }
    // A file changed while the service was down: the folder is listed, as without the signature
    // (one changed file is the same doubt as any other).
    found ??= await this.#scanDirectory()
    // Every file found was a record taken: nothing to read.
    if (takenCount === found.size) return { toRead: [], found }
    const toRead: Array<[string, string]> = []
    for (const entry of found) {
      const at = snapshot.find(entry[0])
      if (at < 0 || taken[at] === 0) toRead.push(entry)
    }
    return { toRead, found }
  }

  /**
   * Whether the folder still has the signature the snapshot recorded (`snapshotFolder`): then the
   * snapshot's records are exactly its entry files, and no scan is needed. Sets the folder's mtime
   * the lists compare with, as a scan would.
   */
  #folderUnchanged (snapshot: RowTable): boolean {
    if (!this.#isFlat()) return false
    const recorded = snapshotFolder(snapshot)
    if (recorded === null) return false
    let st
    try { st = statSync(this.collection.dir) } catch { return false }
    if (folderSignature(st) !== recorded) return false
    this.#dirMtime = st.mtimeMs
    this.#scannedFolder = recorded
    return true
  }

  /** A folder of entry files only (no nesting, bundles or files list): its own signature covers its listing. */
  #isFlat (): boolean {
    const layout = this.#layout
    return layout.files === null && !layout.nested && layout.indexFile === null
  }

  /**
   * The folder's signature to write beside these rows, when they are exactly its entry files: the
   * folder listed between two stats that give this same signature, its last change at least RACY_MS
   * before the first, and the listing naming each row's file, default ones only, and no other file
   * and no problem. Else null (the next start scans the folder).
   * @param rows the rows about to be written
   */
  async #folderOf (rows: readonly StoredRow[]): Promise<string | null> {
    if (!this.#isFlat() || rows.length !== this.#entries.size) return null
    const at = Date.now()
    let before
    try { before = statSync(this.collection.dir) } catch { return null }
    if (!(at - Math.max(before.mtimeMs, before.ctimeMs) >= RACY_MS)) return null
    let scan
    try { scan = await scanLayout(this.#layout) } catch { return null }
    if (scan.problems.size > 0 || scan.others.size > 0 || scan.found.size !== rows.length) return null
    for (const row of rows) {
      const file = scan.found.get(row.id)
      if (file === undefined || !row.hasFile(file)) return null
    }
    let after
    try { after = statSync(this.collection.dir) } catch { return null }
    const signature = folderSignature(before)
    return folderSignature(after) === signature ? signature : null
  }

  /**
   * The files of a snapshot's records, in record order, for the stat pass: packed names (no string
   * per file here) when every default file is `<folder>/<id><ext>`.
   */
  #recordFiles (snapshot: RowTable, statAt: number): string[] | PackedFiles {
    const parts = defaultFileParts(this.#layout)
    if (parts === null) {
      const files = new Array<string>(snapshot.size)
      for (let at = 0; at < files.length; at++) files[at] = snapshot.file(at) ?? defaultFileOf(this.#layout, snapshot.id(at)) ?? ''
      return files
    }
    const { prefix, suffix } = parts
    return { count: snapshot.size, records: snapshot.sharedRecords(), prefix, suffix, statAt, at: i => snapshot.file(i) ?? prefix + snapshot.id(i) + suffix, same: (i, sig) => snapshot.sigEquals(i, sig) }
  }

  /** Carried states: a record not taken (its file changed or is gone) is that entry's last known state. */
  #carryRecord (snapshot: RowTable, at: number, id: string, carried: boolean): void {
    if (carried && !this.#states.has(id) && !this.#entries.has(id)) this.#states.set(id, { rev: snapshot.rev(at), sig: snapshot.sig(at) })
  }

  /**
   * How the index was built: entries taken from the persisted snapshot and entries read from files.
   * @returns the counts of the last build (both 0 before it)
   */
  get loadStats (): { fromSnapshot: number, read: number } {
    return { ...this.#loadStats }
  }

  /**
   * Whether the last build listed the collection folder (false: the snapshot's folder signature
   * stood for the listing, `snapshotFolder`).
   */
  get listedFolder (): boolean {
    return this.#listedFolder
  }

  /**
   * Whether the last build took the entries' revisions from the snapshot (the log held the bytes
   * the snapshot recorded) instead of parsing the revision log.
   * @returns false before the first build
   */
  get statesCarried (): boolean {
    return this.#statesCarried
  }

  /**
   * Writes the snapshot now if rows changed since the last one (on close).
   * @returns resolves once written (a failure is ignored: the snapshot is only a hint)
   */
  async flushSnapshot (): Promise<void> {
    if (this.#snapshotTimer !== null) { clearTimeout(this.#snapshotTimer); this.#snapshotTimer = null }
    await this.#snapshotWrite
    // On close: the rows are not taken onto the file just written (nothing reads them after).
    if (this.#snapshotStale && this.#built) await this.#writeSnapshot(false)
  }

  /** Writes the snapshot after `delayMs` unless a write is already planned. */
  #scheduleSnapshot (delayMs: number): void {
    if (this.#opts.snapshot == null || this.#snapshotTimer !== null) return
    this.#snapshotTimer = setTimeout(() => {
      this.#snapshotTimer = null
      void this.#writeSnapshot()
    }, delayMs)
    this.#snapshotTimer.unref()
  }

  /**
   * Persists the rows that are safe to trust later (no read error, not racy).
   * @param adopt then let the rows written with their data parsed point at their records (`#adopt`)
   */
  async #writeSnapshot (adopt = true): Promise<void> {
    const snapshot = this.#opts.snapshot
    if (snapshot == null) return
    const write = this.#snapshotWrite.then(async () => {
      if (!this.#snapshotStale) return
      // A compaction of the log planned at load is written first: the snapshot records the log's bytes.
      await this.#opts.log.settle()
      this.#snapshotStale = false
      // In list order: the next start's first sort then finds the rows sorted.
      this.#sorted ??= [...this.#entries.values()].sort(this.#compare)
      const rows: StoredRow[] = []
      for (const row of this.#sorted) if (row.readError === undefined && !this.#racy.has(row.id)) rows.push(row)
      // Taken in the same turn as the rows: the log's bytes and the states beside the rows.
      const carried = this.#carriedStates()
      try {
        await snapshot.write(rows, carried, await this.#folderOf(rows))
      } catch {
        // Not written (a full disk, a read-only .git): the next start reads more files, nothing else.
        this.#snapshotStale = true
        return
      }
      if (adopt) await this.#adopt(snapshot, rows).catch(() => {})
    })
    this.#snapshotWrite = write
    await write
  }

  /**
   * Lets rows just persisted with their data parsed (read from their files in this thread: a
   * collection under 200 files, an entry saved or changed outside) point at their records in the
   * snapshot instead, as after a restart: a lazy row keeps no fields, title or strings until used
   * (issue 18: at 1,000 collections x 100 read from their files, 40 MB of parsed fields stayed).
   * Only a row still in the index, with the very signature and file written, is swapped. A large
   * snapshot whose rows are mostly lazy already is not read back for a few rows.
   */
  async #adopt (snapshot: IndexSnapshot, written: readonly StoredRow[]): Promise<void> {
    let parsed = 0
    for (const row of written) if (row.lazySource() === null) parsed++
    if (parsed === 0 || (parsed < written.length && snapshotBytes(snapshot.file) >= ADOPT_PARTIAL_MAX_BYTES)) return
    const table = await snapshot.read()
    if (table === null) return
    const swapped = new Map<StoredRow, StoredRow>()
    try {
      for (const row of written) {
        if (row.lazySource() !== null || this.#entries.get(row.id) !== row) continue
        const at = table.find(row.id)
        if (at < 0 || !table.sigEquals(at, row.sig)) continue
        const file = table.file(at)
        if (file === null ? !row.hasDefaultFile() : file !== row.file) continue
        const lazy = StoredRow.lazy(this.#home, row.id, file, row.revision, table.order(at), table, at)
        this.#entries.set(row.id, lazy)
        swapped.set(row, lazy)
      }
    } finally {
      table.release()
    }
    const sorted = this.#sorted
    if (sorted === null || swapped.size === 0) return
    for (let i = 0; i < sorted.length; i++) {
      const lazy = swapped.get(sorted[i]!)
      if (lazy !== undefined) sorted[i] = lazy
    }
  }

  /**
   * The revision states a snapshot of the rows carries (see `CarriedStates`): the log's digest, and
   * every state that is not a written row's (deleted entries, unreadable and racy rows).
   * @returns the states, or null (no log yet, or a state in transition beside its row: the next
   * start parses the log)
   */
  #carriedStates (): CarriedStates | null {
    let bytes: Buffer
    try { bytes = readFileSync(this.#opts.log.file) } catch (err) {
      // No log yet (no entry ever changed) is an empty one.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return null
      bytes = Buffer.alloc(0)
    }
    const carried: CarriedStates = { log: logDigest(bytes), bytes: bytes.length, ids: [], revs: [], sigs: [] }
    for (const [id, state] of this.#states) {
      if (this.#entries.has(id)) return null
      carried.ids.push(id)
      carried.revs.push(state.rev)
      carried.sigs.push(state.sig)
    }
    for (const row of this.#entries.values()) {
      if (row.readError === undefined && !this.#racy.has(row.id)) continue
      carried.ids.push(row.id)
      carried.revs.push(row.revision)
      carried.sigs.push(row.sig)
    }
    return carried
  }

  /**
   * The revision states to start from: the snapshot's, when it carries them and the log still has
   * the bytes they were taken with; else the log's, parsed.
   * @returns the states, and whether they came from the snapshot (its records then give the rows' revisions)
   */
  async #loadStates (snapshot: RowTable | null, logReading: Promise<Buffer | null>): Promise<{ states: Map<string, RevisionState>, carried: boolean }> {
    const carried = snapshot === null ? null : carriedStates(snapshot)
    if (carried !== null && carried.bytes <= CARRY_MAX_LOG_BYTES + CARRY_LOG_BYTES_PER_ROW * (snapshot!.size + carried.ids.length)) {
      const bytes = await logReading
      if (bytes !== null && bytes.length === carried.bytes && logDigest(bytes) === carried.log) {
        const states = new Map<string, RevisionState>()
        for (let i = 0; i < carried.ids.length; i++) states.set(carried.ids[i]!, { rev: carried.revs[i]!, sig: carried.sigs[i]! })
        return { states, carried: true }
      }
    }
    // Not carried (or the log changed since): the next snapshot carries the log as it is now.
    if (snapshot !== null) this.#snapshotStale = true
    return { states: await this.#opts.log.load(), carried: false }
  }

  /**
   * The revision log's bytes (empty when there is no log yet), or null when it cannot be read or is
   * larger than any snapshot's carried states could stand for (it is parsed then).
   */
  async #readLog (): Promise<Buffer | null> {
    const file = this.#opts.log.file
    const rows = snapshotBytes(this.#opts.snapshot!.file) / MIN_RECORD_BYTES
    try {
      if (statSync(file).size > CARRY_MAX_LOG_BYTES + CARRY_LOG_BYTES_PER_ROW * 2 * rows) return null
      return await readFile(file)
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ENOENT' ? Buffer.alloc(0) : null
    }
  }

  /**
   * Reads one file into the index; returns the entry with all its data and the revision change
   * to log, if any (null when the file is missing).
   */
  async #index (id: string, file: string): Promise<{ entry: IndexedEntry, change: RevisionChange | null } | null> {
    const rules = this.#rules(file)
    const readAt = Date.now()
    const state = await readEntryFile(this.#opts.repoRealDir, file, rules.format)
    if (state.kind === 'missing') return null
    const { rev, sig, change } = this.#revise(id, state.sig)
    const problem = this.#problems.get(id)
    if (state.kind !== 'ok' || problem !== undefined) {
      const message = problem ?? (state as { message: string }).message
      this.#opts.onEntryChange?.(id, undefined)
      return { entry: entryOf(this.#store(id, file, sig, rev, { message }, readAt), undefined), change }
    }
    const row = this.#store(id, file, sig, rev, rowContent(id, state.data, state.text, rules, this.#opts.validate), readAt)
    this.#opts.onEntryChange?.(id, state.data)
    return { entry: entryOf(row, state.data), change }
  }

  /** The revision a file with this signature has: the known one, or the next when it changed. */
  #revise (id: string, sig: string): { rev: number, sig: string, change: RevisionChange | null } {
    const known = this.#stateOf(id)
    // The same text: keep one signature string for both.
    if (known !== undefined && known.sig === sig) return { rev: known.rev, sig: known.sig, change: null }
    // A signature logged before the ctime was part of it: the same file when the rest matches.
    if (known?.sig != null && Number.isNaN(signatureCtime(known.sig)) && sig.startsWith(`${known.sig}:`)) {
      this.#setState(id, { rev: known.rev, sig })
      return { rev: known.rev, sig, change: { id, rev: known.rev, sig } }
    }
    const rev = (known?.rev ?? 0) + 1
    this.#setState(id, { rev, sig })
    return { rev, sig, change: { id, rev, sig } }
  }

  /** Re-checks one entry's file and gives it with all its data. */
  async #fresh (id: string): Promise<IndexedEntry | null> {
    const current = this.#entries.get(id)
    if (current?.bodyAt !== undefined) {
      // The common case in one open: a plain file (not a link) whose signature still matches is
      // unchanged, so its body is where it was; anything else takes the full check below. A text
      // this service wrote there needs one lstat, no read.
      const text = writtenTexts.textIfUnchanged(current.file, current.sig) ?? await readTextIfUnchanged(current.file, current.sig, { noFollow: true })
      if (text !== null) return withText(entryOf(current, { ...current.fields, body: text.slice(current.bodyAt) }), text)
    }
    const checked = await this.#refresh(id)
    if (checked === null) return null
    if ('entry' in checked) return checked.entry
    const entry = await this.#withData(checked.row)
    // A data file (no body) this service wrote: its writer edits the kept text, no read either.
    const text = entry !== null && checked.row.bodyAt === undefined ? writtenTexts.textIfUnchanged(checked.row.file, checked.row.sig) : undefined
    return text !== undefined ? withText(entry as IndexedEntry, text) : entry
  }

  /** Re-checks one entry's file; re-reads it (giving all its data) only when its signature changed. */
  async #refresh (id: string): Promise<{ row: IndexRow } | { entry: IndexedEntry } | null> {
    // The service is changing this entry's file: its own record gives the revision.
    const writing = this.#writing.get(id)
    if (writing !== undefined) await writing
    const current = this.#entries.get(id)
    const pending = this.#pendingFiles.get(id)
    this.#pendingFiles.delete(id)
    const file = pending ?? current?.file ?? await this.#findFile(id)
    if (file === null) {
      if (current !== undefined) await this.recordDelete(id)
      return null
    }
    const sig = await statEntryFile(this.#opts.repoRealDir, file)
    if (current !== undefined && sig === current.sig) return { row: current }
    if (sig === null) {
      if (current !== undefined) await this.recordDelete(id)
      return null
    }
    const entry = await this.#reindex(id, file)
    return entry === null ? null : { entry }
  }

  /** Re-reads one file, logging its revision change. */
  async #reindex (id: string, file: string): Promise<IndexedEntry | null> {
    const read = await this.#index(id, file)
    if (read === null) return null
    if (read.change !== null) await this.#opts.log.append([read.change])
    return read.entry
  }

  /** A row with all its data: a Markdown body is read back from the file it was indexed from. */
  async #withData (row: IndexRow): Promise<IndexedEntry | null> {
    if (row.bodyAt === undefined) return entryOf(row, row.fields)
    const text = await readTextIfUnchanged(row.file, row.sig)
    if (text !== null) return entryOf(row, { ...row.fields, body: text.slice(row.bodyAt) })
    // Changed since the stat a moment ago: read it again.
    return await this.#reindex(row.id, row.file)
  }


  /**
   * Notices files added or removed: a rescan when the folder's own mtime changed (a flat
   * collection's additions and removals, a nested one's top-level ones) or when the watcher saw
   * a change no single entry explains. A nested or bundled collection relies on the watcher for
   * changes deeper down: stat-ing every subfolder on every list would cost a walk per request.
   */
  async #refreshDirectory (): Promise<void> {
    let mtime: number
    try {
      // In this thread: one system call (~3 µs) rather than a turn through the thread pool, which a
      // restart keeps busy (issue 18, eighth pass: 40-130 ms before the first list under load).
      mtime = statSync(this.collection.dir).mtimeMs
    } catch {
      mtime = 0
    }
    if (mtime === this.#dirMtime && !this.#rescan && this.#layout.files === null) return
    this.#rescan = false
    const before = this.#problems
    const onDisk = await this.#scanDirectory()
    this.#dirMtime = mtime
    for (const [id, row] of [...this.#entries]) {
      const file = onDisk.get(id)
      if (file === undefined) { this.#dirty.add(id); continue }
      if (!row.hasFile(file) || before.get(id) !== this.#problems.get(id)) {
        // Another file now, or its problem came or went: read it again (the revision follows the signature).
        this.#keepState(id)
        this.#entries.delete(id)
        this.#opts.onEntryChange?.(id, null)
        this.#sorted = null
        this.#pendingFiles.set(id, file)
        this.#dirty.add(id)
      }
    }
    for (const [id, file] of onDisk) {
      if (!this.#entries.has(id)) {
        this.#pendingFiles.set(id, file)
        this.#dirty.add(id)
      }
    }
  }

  async #scanDirectory (): Promise<Map<string, string>> {
    const at = Date.now()
    let folder = null
    try {
      folder = await stat(this.collection.dir)
      this.#dirMtime = folder.mtimeMs
    } catch {}
    const { found, problems, others } = await scanLayout(this.#layout)
    this.#problems = problems
    this.#scanOthers = others
    this.#scannedFolder = folder !== null && this.#isFlat() && problems.size === 0 && others.size === 0 && at - Math.max(folder.mtimeMs, folder.ctimeMs) >= RACY_MS ? folderSignature(folder) : null
    return found
  }

  /** The file of an id not (yet) indexed: the first candidate that exists, inside the folder. */
  async #findFile (id: string): Promise<string | null> {
    const folderReal = this.#folderReal()
    for (const file of candidateFiles(this.#layout, id)) {
      if (!resolvesInside(folderReal, file)) continue
      if (await statEntryFile(this.#opts.repoRealDir, file) !== null) return file
    }
    return null
  }

  /** The collection folder's real path; 400 when it (or a link on its way) leaves the repository. */
  #folderReal (): string {
    const repoReal = this.#opts.repoRealDir
    const real = realPathOf(this.collection.dir)
    if (real === null || !isInside(repoReal, real) || isInside(this.#gitReal, real)) {
      throw new BadRequestError('The collection folder leaves the repository', { collection: this.collection.name })
    }
    return real
  }

  /**
   * Refuses (400) a collection folder that leaves the repository (a link on its way).
   */
  checkFolder (): void {
    this.#folderReal()
  }

  /** Puts an entry's row into the index. */
  #store (id: string, file: string, sig: string, revision: number, content: RowContent | { message: string }, readAt: number): StoredRow {
    const row = new StoredRow(this.#home, id, file, sig, revision, content)
    this.#put(row, readAt)
    return row
  }

  #rules (file?: string): RowRules {
    const { format, titleField, orderField } = this.collection
    return { format: file === undefined ? format : formatOfFile(file, format), titleField, orderField }
  }

  #setState (id: string, state: RevisionState): void {
    this.#revisionSum += state.rev - (this.#stateOf(id)?.rev ?? 0)
    this.#states.set(id, state)
  }

  /** An entry's last known state: its own, or its row's. */
  #stateOf (id: string): RevisionState | undefined {
    const state = this.#states.get(id)
    if (state !== undefined) return state
    const row = this.#entries.get(id)
    return row === undefined ? undefined : { rev: row.revision, sig: row.sig }
  }

  /** Keeps a row's state before the row leaves the index without a revision change. */
  #keepState (id: string): void {
    const row = this.#entries.get(id)
    if (row !== undefined && !this.#states.has(id)) this.#states.set(id, { rev: row.revision, sig: row.sig })
  }

  /**
   * Every row that enters the index passes here (a build, a snapshot, a write, an outside change);
   * every row that leaves it passes through `#remove`.
   * @param entry the row
   * @param readAt when its file was stat-ed (before): a file changed that close to it is racy
   * @param sig the row's signature, when the caller has its string (a lazy row builds it when asked)
   * @param racy whether the row is racy, when the caller knows (a packed stat pass tells)
   */
  #put (entry: StoredRow, readAt: number, sig?: string, racy?: boolean): void {
    const before = this.#entries.get(entry.id)
    this.#entries.set(entry.id, entry)
    // The row now holds the entry's state.
    const state = this.#states.get(entry.id)
    if (state !== undefined && state.rev === entry.revision && state.sig === (sig ?? entry.sig)) this.#states.delete(entry.id)
    // NaN (no ctime known) counts as racy: never persisted.
    if (racy ?? !(readAt - signatureCtime(sig ?? entry.sig) >= RACY_MS)) this.#racy.add(entry.id)
    else if (this.#racy.size > 0) this.#racy.delete(entry.id)
    if (before !== entry) this.#rowsChanged()
    if (this.#sorted === null) return
    if (before === undefined || before.order !== entry.order) this.#sorted = null
    else this.#replaceSorted(before, entry)
  }

  /**
   * Puts a row in the sorted list in place of its previous row (same id and order, so the same
   * place): found by binary search, so a save costs the same at 100,000 entries as at 1,000.
   */
  #replaceSorted (before: StoredRow, entry: StoredRow): void {
    const sorted = this.#sorted!
    let lo = 0
    let hi = sorted.length - 1
    let at = -1
    while (lo <= hi && at < 0) {
      const mid = (lo + hi) >> 1
      const c = this.#compare(sorted[mid]!, before)
      if (c === 0) at = mid
      else if (c < 0) lo = mid + 1
      else hi = mid - 1
    }
    if (at >= 0 && sorted[at] === before) sorted[at] = entry
    else this.#sorted = null
  }

  #remove (id: string): void {
    const row = this.#entries.get(id)
    if (row !== undefined) writtenTexts.forget(row.file)
    this.#opts.onEntryChange?.(id, null)
    this.#racy.delete(id)
    if (this.#entries.delete(id)) {
      this.#sorted = null
      this.#rowsChanged()
    }
  }

  /** The persisted snapshot no longer matches the rows: write it again later. */
  #rowsChanged (): void {
    if (!this.#built || this.#snapshotStale) return
    this.#snapshotStale = true
    this.#scheduleSnapshot(SNAPSHOT_DELAY_MS)
  }

  readonly #compare = (a: IndexRow, b: IndexRow): number => {
    if (this.collection.metadata.orderable) {
      const ao = a.order ?? Number.POSITIVE_INFINITY
      const bo = b.order ?? Number.POSITIVE_INFINITY
      if (ao !== bo) return ao < bo ? -1 : 1
    }
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
  }
}

/**
 * `realPathOf` of a file directly in a folder whose real path is known: a name that is not a link
 * (or does not exist) is resolved by the folder's real path, so one lstat replaces realpath's walk
 * over every component of the path (one readlink each; issue 18, ninth pass). A link, or anything
 * the lstat cannot tell, is resolved by `realPathOf`.
 */
function realPathInFolder (folderReal: string, file: string): string | null {
  let st
  try {
    st = lstatSync(file, { throwIfNoEntry: false })
  } catch {
    return realPathOf(file)
  }
  if (st?.isSymbolicLink() === true) return realPathOf(file)
  return path.join(folderReal, path.basename(file))
}

/**
 * The texts this process wrote lately into entry files, all collections together (one bound): the
 * entry's next save needs no read of its file.
 */
const writtenTexts = new WrittenTexts()

/** How long after a build its snapshot's buffer is released (`RowTable.release`): the first lists are answered first. */
const RELEASE_AFTER_MS = 100

/** The file text a `get` just read an entry from, for a writer that edits that text (issue 18). */
const entryTexts = new WeakMap<IndexedEntry, string>()

function withText (entry: IndexedEntry, text: string): IndexedEntry {
  entryTexts.set(entry, text)
  return entry
}

/**
 * The text of its file that `get` read an entry's data from just now, when it read one.
 * @param entry an entry `get` gave
 * @returns the file's text, or undefined
 */
export function textOfEntry (entry: IndexedEntry): string | undefined {
  return entryTexts.get(entry)
}

function entryOf (row: IndexRow, data: EntryData | undefined): IndexedEntry {
  const entry: IndexedEntry = { id: row.id, file: row.file, sig: row.sig, revision: row.revision, title: row.title, order: row.order }
  if (row.readError !== undefined) entry.readError = row.readError
  if (data !== undefined) entry.data = data
  if (row.validationIssues !== undefined) entry.validationIssues = row.validationIssues
  return entry
}
