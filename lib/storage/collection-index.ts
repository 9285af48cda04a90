/**
 * The in-memory index of one collection: every entry's parsed data, revision, search text and
 * sort key. It is built once (on first use), kept fresh by the file watcher, and checked cheaply
 * on read (a stat of the page's files and of the directory), so no request reads every file.
 */
import { readdir, stat } from 'node:fs/promises'
import path from 'node:path'
import type { ValidationIssue } from '../errors.js'
import { FORMAT_EXTENSIONS, type EntryData } from '../content/formats.js'
import { titlesOf, searchTextOf } from '../content/entry-search.js'
import type { Collection } from './collection-registry.js'
import { readEntryFile, statEntryFile } from './entry-file.js'
import { ENTRY_ID } from './names.js'
import type { RevisionLog, RevisionState } from './revision-log.js'

/** One entry as the index holds it. */
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

export interface IndexOptions {
  collection: Collection
  repoRealDir: string
  log: RevisionLog
  /** Returns the validation issues of data against the collection's schema. */
  validate: (data: EntryData) => ValidationIssue[]
}

const LOAD_CONCURRENCY = 64

/** The index of one collection. */
export class CollectionIndex {
  readonly collection: Collection
  readonly #opts: IndexOptions
  readonly #entries = new Map<string, IndexedEntry>()
  readonly #dirty = new Set<string>()
  #states = new Map<string, RevisionState>()
  #revisionSum = 0
  #sorted: IndexedEntry[] | null = null
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
   * @returns the sorted entries (do not mutate)
   */
  async all (): Promise<readonly IndexedEntry[]> {
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
    return await this.#refresh(id)
  }

  /**
   * Re-checks the given entries against their files (the cheap check for a page of results).
   * @param entries entries about to be returned
   * @returns the same entries, fresh (dropping any deleted meanwhile)
   */
  async freshen (entries: readonly IndexedEntry[]): Promise<IndexedEntry[]> {
    const fresh = await Promise.all(entries.map(async e => await this.#refresh(e.id)))
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
    this.#put(this.#build(id, file, sig, rev, { data }))
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

  async #load (): Promise<void> {
    this.#states = await this.#opts.log.load()
    for (const state of this.#states.values()) this.#revisionSum += state.rev
    const ids = await this.#scanDirectory()
    const pending: Array<{ id: string } & RevisionState> = []
    for (let i = 0; i < ids.length; i += LOAD_CONCURRENCY) {
      await Promise.all(ids.slice(i, i + LOAD_CONCURRENCY).map(async ([id, file]) => {
        const change = await this.#index(id, file)
        if (change !== null) pending.push(change)
      }))
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

  /** Reads one file into the index; returns the revision change to log, if any. */
  async #index (id: string, file: string): Promise<({ id: string } & RevisionState) | null> {
    const state = await readEntryFile(this.#opts.repoRealDir, file, this.collection.format)
    if (state.kind === 'missing') return null
    const known = this.#states.get(id)
    let rev = known?.rev ?? 0
    let change: ({ id: string } & RevisionState) | null = null
    if (known === undefined || known.sig !== state.sig) {
      rev += 1
      change = { id, rev, sig: state.sig }
      this.#setState(id, { rev, sig: state.sig })
    }
    this.#put(this.#build(id, file, state.sig, rev, state.kind === 'ok' ? { data: state.data } : { message: state.message }))
    return change
  }

  /** Re-checks one entry's file; re-reads it only when its signature changed. */
  async #refresh (id: string): Promise<IndexedEntry | null> {
    const current = this.#entries.get(id)
    const file = current?.file ?? await this.#findFile(id)
    if (file === null) return null
    const sig = await statEntryFile(this.#opts.repoRealDir, file)
    if (current !== undefined && sig === current.sig) return current
    if (sig === null) {
      if (current !== undefined) await this.recordDelete(id)
      return null
    }
    const change = await this.#index(id, file)
    if (change !== null) await this.#opts.log.append([change])
    return this.#entries.get(id) ?? null
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

  #build (id: string, file: string, sig: string, revision: number, content: { data: EntryData } | { message: string }): IndexedEntry {
    const entry: IndexedEntry = { id, file, sig, revision, search: id.toLowerCase(), title: id, order: null }
    if ('message' in content) {
      entry.readError = { message: content.message }
      return entry
    }
    entry.data = content.data
    const issues = this.#opts.validate(content.data)
    if (issues.length > 0) entry.validationIssues = issues
    const titles = titlesOf(content.data, this.collection.titleField)
    if (titles[0] !== undefined) entry.title = titles[0]
    entry.search = searchTextOf(id, content.data, this.collection.titleField)
    const order = content.data[this.collection.orderField]
    entry.order = typeof order === 'number' ? order : null
    return entry
  }

  #setState (id: string, state: RevisionState): void {
    this.#revisionSum += state.rev - (this.#states.get(id)?.rev ?? 0)
    this.#states.set(id, state)
  }

  #put (entry: IndexedEntry): void {
    const before = this.#entries.get(entry.id)
    this.#entries.set(entry.id, entry)
    if (this.#sorted === null) return
    if (before === undefined || before.order !== entry.order) this.#sorted = null
    else this.#sorted[this.#sorted.indexOf(before)] = entry
  }

  #remove (id: string): void {
    if (this.#entries.delete(id)) this.#sorted = null
  }

  readonly #compare = (a: IndexedEntry, b: IndexedEntry): number => {
    if (this.collection.metadata.orderable) {
      const ao = a.order ?? Number.POSITIVE_INFINITY
      const bo = b.order ?? Number.POSITIVE_INFINITY
      if (ao !== bo) return ao < bo ? -1 : 1
    }
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
  }
}
