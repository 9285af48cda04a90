/**
 * The in-memory index of one collection: every entry's parsed data, revision, search text and
 * sort key. It is built once (on first use), kept fresh by the file watcher, and checked cheaply
 * on read (a stat of the page's files and of the directory), so no request reads every file.
 * A Markdown body is the bulk of an entry and only the entries a read returns need it: the index
 * keeps where it starts and reads it back from the file (whose signature it checks) on demand.
 */
import { readdir, stat } from 'node:fs/promises'
import path from 'node:path'
import type { ValidationIssue } from '../errors.js'
import { FORMAT_EXTENSIONS, isMarkdownFormat, type EntryData } from '../content/formats.js'
import type { Collection } from './collection-registry.js'
import { readEntryFile, statEntryFile } from './entry-file.js'
import { readTextIfUnchanged } from './entry-text.js'
import { makeRow, rowContent, type IndexRow, type RowContent, type RowRules } from './index-row.js'
import { readInWorker } from './index-reader.js'
import { ENTRY_ID } from './names.js'
import type { RevisionLog, RevisionState } from './revision-log.js'

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
  /** Lowercased id and title fields, for `q`. */
  search: string
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
}

const LOAD_CONCURRENCY = 64

/** The index of one collection. */
export class CollectionIndex {
  readonly collection: Collection
  readonly #opts: IndexOptions
  readonly #entries = new Map<string, IndexRow>()
  readonly #dirty = new Set<string>()
  #states = new Map<string, RevisionState>()
  #revisionSum = 0
  #sorted: IndexRow[] | null = null
  #dirMtime = -1
  #loading: Promise<void> | null = null

  constructor (opts: IndexOptions) {
    this.collection = opts.collection
    this.#opts = opts
  }

  /**
   * Builds the index on first use.
   * @returns resolves when every entry is indexed
   */
  async ready (): Promise<void> {
    this.#loading ??= this.#load()
    return await this.#loading
  }

  /**
   * Marks an entry as possibly changed on disk (from the watcher); it is re-checked on next read.
   * @param id entry id, or null when the directory itself changed
   */
  markDirty (id: string | null): void {
    if (id === null) this.#dirMtime = -1
    else this.#dirty.add(id)
  }

  /**
   * All entries in list order, fresh with respect to the directory and the watcher.
   * @returns the sorted rows (do not mutate); `freshen` gives their full data
   */
  async all (): Promise<readonly IndexRow[]> {
    await this.ready()
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
   * @returns the entry, or null when it does not exist
   */
  async get (id: string): Promise<IndexedEntry | null> {
    await this.ready()
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
   * @returns the entry's new revision
   */
  async recordWrite (id: string, data: EntryData): Promise<number> {
    const file = this.fileOf(id)
    const sig = await statEntryFile(this.#opts.repoRealDir, file)
    if (sig === null || sig === 'link-outside') throw new Error(`entry file vanished after write: ${file}`)
    const rev = this.lastRevision(id) + 1
    await this.#opts.log.append([{ id, rev, sig }])
    this.#setState(id, { rev, sig })
    // The text just written tells where the body starts (read back only if it is still that file).
    const text = isMarkdownFormat(this.collection.format) ? await readTextIfUnchanged(file, sig) : null
    this.#store(id, file, sig, rev, rowContent(id, data, text, this.#rules(), this.#opts.validate))
    return rev
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
   * The file path an entry has or would have.
   * @param id a valid entry id
   * @returns absolute path
   */
  fileOf (id: string): string {
    const existing = this.#entries.get(id)
    if (existing !== undefined) return existing.file
    return path.join(this.collection.dir, id + FORMAT_EXTENSIONS[this.collection.format][0]!)
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

  async #load (): Promise<void> {
    this.#states = await this.#opts.log.load()
    for (const state of this.#states.values()) this.#revisionSum += state.rev
    const ids = await this.#scanDirectory()
    const pending: RevisionChange[] = []
    let read: IndexRow[] | null = null
    if (ids.length >= CollectionIndex.#INLINE_MAX_FILES) {
      try {
        read = await readInWorker({ repoRealDir: this.#opts.repoRealDir, files: ids, rules: this.#rules(), schema: this.collection.schema })
      } catch {
        // No worker (or it failed): read in this thread.
      }
    }
    if (read !== null) {
      // The worker's rows are used as they arrive (no copy: less garbage in this heap).
      for (const row of read) {
        const { rev, sig, change } = this.#revise(row.id, row.sig)
        if (change !== null) pending.push(change)
        row.sig = sig
        row.revision = rev
        this.#put(row)
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
    for (const [id, state] of this.#states) {
      if (state.sig !== null && !this.#entries.has(id)) {
        const rev = state.rev + 1
        this.#setState(id, { rev, sig: null })
        pending.push({ id, rev, sig: null })
      }
    }
    await this.#opts.log.append(pending)
  }

  /**
   * Reads one file into the index; returns the entry with all its data and the revision change
   * to log, if any (null when the file is missing).
   */
  async #index (id: string, file: string): Promise<{ entry: IndexedEntry, change: RevisionChange | null } | null> {
    const state = await readEntryFile(this.#opts.repoRealDir, file, this.collection.format)
    if (state.kind === 'missing') return null
    const { rev, sig, change } = this.#revise(id, state.sig)
    if (state.kind !== 'ok') return { entry: entryOf(this.#store(id, file, sig, rev, { message: state.message }), undefined), change }
    const row = this.#store(id, file, sig, rev, rowContent(id, state.data, state.text, this.#rules(), this.#opts.validate))
    return { entry: entryOf(row, state.data), change }
  }

  /** The revision a file with this signature has: the known one, or the next when it changed. */
  #revise (id: string, sig: string): { rev: number, sig: string, change: RevisionChange | null } {
    const known = this.#states.get(id)
    // The same text: keep one signature string for both.
    if (known !== undefined && known.sig === sig) return { rev: known.rev, sig: known.sig, change: null }
    const rev = (known?.rev ?? 0) + 1
    this.#setState(id, { rev, sig })
    return { rev, sig, change: { id, rev, sig } }
  }

  /** Re-checks one entry's file and gives it with all its data. */
  async #fresh (id: string): Promise<IndexedEntry | null> {
    const current = this.#entries.get(id)
    if (current?.bodyAt !== undefined) {
      // The common case in one open: a plain file (not a link) whose signature still matches is
      // unchanged, so its body is where it was; anything else takes the full check below.
      const text = await readTextIfUnchanged(current.file, current.sig, { noFollow: true })
      if (text !== null) return entryOf(current, { ...current.fields, body: text.slice(current.bodyAt) })
    }
    const checked = await this.#refresh(id)
    if (checked === null) return null
    return 'entry' in checked ? checked.entry : await this.#withData(checked.row)
  }

  /** Re-checks one entry's file; re-reads it (giving all its data) only when its signature changed. */
  async #refresh (id: string): Promise<{ row: IndexRow } | { entry: IndexedEntry } | null> {
    const current = this.#entries.get(id)
    const file = current?.file ?? await this.#findFile(id)
    if (file === null) return null
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


  async #refreshDirectory (): Promise<void> {
    let mtime: number
    try {
      mtime = (await stat(this.collection.dir)).mtimeMs
    } catch {
      mtime = 0
    }
    if (mtime === this.#dirMtime) return
    const onDisk = new Map(await this.#scanDirectory())
    this.#dirMtime = mtime
    for (const id of [...this.#entries.keys()]) {
      if (!onDisk.has(id)) this.#dirty.add(id)
    }
    for (const id of onDisk.keys()) {
      if (!this.#entries.has(id)) this.#dirty.add(id)
    }
  }

  async #scanDirectory (): Promise<Array<[string, string]>> {
    const exts = FORMAT_EXTENSIONS[this.collection.format]
    let names: string[]
    try {
      names = await readdir(this.collection.dir)
    } catch {
      return []
    }
    try { this.#dirMtime = (await stat(this.collection.dir)).mtimeMs } catch {}
    const found: Array<[string, string]> = []
    for (const name of names) {
      const ext = path.extname(name)
      const id = name.slice(0, -ext.length)
      if (exts.includes(ext) && ENTRY_ID.test(id)) found.push([id, path.join(this.collection.dir, name)])
    }
    return found
  }

  async #findFile (id: string): Promise<string | null> {
    for (const ext of FORMAT_EXTENSIONS[this.collection.format]) {
      const file = path.join(this.collection.dir, id + ext)
      if (await statEntryFile(this.#opts.repoRealDir, file) !== null) return file
    }
    return null
  }

  /** Puts an entry's row into the index. */
  #store (id: string, file: string, sig: string, revision: number, content: RowContent | { message: string }): IndexRow {
    const row = makeRow(id, file, sig, revision, content)
    this.#put(row)
    return row
  }

  #rules (): RowRules {
    const { format, titleField, orderField } = this.collection
    return { format, titleField, orderField }
  }

  #setState (id: string, state: RevisionState): void {
    this.#revisionSum += state.rev - (this.#states.get(id)?.rev ?? 0)
    this.#states.set(id, state)
  }

  #put (entry: IndexRow): void {
    const before = this.#entries.get(entry.id)
    this.#entries.set(entry.id, entry)
    if (this.#sorted === null) return
    if (before === undefined || before.order !== entry.order) this.#sorted = null
    else this.#sorted[this.#sorted.indexOf(before)] = entry
  }

  #remove (id: string): void {
    if (this.#entries.delete(id)) this.#sorted = null
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

function entryOf (row: IndexRow, data: EntryData | undefined): IndexedEntry {
  const entry: IndexedEntry = { id: row.id, file: row.file, sig: row.sig, revision: row.revision, search: row.search, title: row.title, order: row.order }
  if (row.readError !== undefined) entry.readError = row.readError
  if (data !== undefined) entry.data = data
  if (row.validationIssues !== undefined) entry.validationIssues = row.validationIssues
  return entry
}
