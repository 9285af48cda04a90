/**
 * The index of one collection: every entry's row in a Map, persisted in SQLite (`index-store.ts`),
 * built on first use (a file is read again only when its signature differs from its stored row's).
 * The watcher marks changed entries; a read stats the entry's file anyway, and a list the folder.
 */
import { statSync } from 'node:fs'
import { setImmediate as nextTurn } from 'node:timers/promises'
import path from 'node:path'
import { BadRequestError, ForbiddenError, type ValidationIssue } from '../errors.js'
import { isMarkdownFormat, type EntryData, type EntryFormat } from '../content/formats.js'
import type { Collection } from './collection-registry.js'
import { readEntryFile, readTextIfUnchanged, statEntryFileNow } from './entry-file.js'
import { candidateFiles, formatOfFile, idLayoutProblem, idOfPath, newFileOf, scanLayout, type EntryLayout } from './entry-paths.js'
import { isInside, realPathOf, resolvesInside } from './safe-path.js'
import { RACY_MS, signatureCtime, signatureSize } from './file-signature.js'
import { definitionKey, type IndexStore, type StoredEntry } from './index-store.js'
import { titlesOf } from '../content/entry-search.js'

/** What the index keeps of an entry's content (lists filter and sort on it; a read fetches a Markdown body). */
interface RowContent {
  /** The entry's data, except a Markdown `body` when `bodyAt` is set. */
  fields: EntryData
  /** Where the Markdown body starts in the file's text (UTF-16 code units). */
  bodyAt?: number
  validationIssues?: ValidationIssue[]
  title: string
  order: number | null
}

/** One entry as the index holds it (what lists filter and sort on), without a Markdown body. */
export interface IndexRow extends Omit<RowContent, 'fields'> {
  id: string
  file: string
  sig: string
  revision: number
  /** As in RowContent; undefined when unreadable. */
  fields?: EntryData
  readError?: { message: string }
}

/** One entry with all its data (a Markdown body included), as reads return it. */
export interface IndexedEntry extends Omit<IndexRow, 'fields' | 'bodyAt'> {
  data?: EntryData
  /** The file's text `data` was read from, when this read had it (a Markdown entry's). */
  text?: string
}

export interface IndexOptions {
  collection: Collection
  repoRealDir: string
  store: IndexStore
  /** The validation issues of data against the collection's schema. */
  validate: (data: EntryData) => ValidationIssue[] | Promise<ValidationIssue[]>
  /** Resolves true once the file watcher sees changes: a build that started before checks its files again then. */
  watching?: Promise<boolean>
}

/** Files stat-ed (or rows re-checked) between two yields to the event loop. */
const CHUNK = 1000
/** Files read at once during a build. */
const READ_CONCURRENCY = 32

/** The index of one collection. */
export class CollectionIndex {
  readonly collection: Collection
  readonly #opts: IndexOptions
  readonly #layout: EntryLayout
  readonly #gitReal: string
  readonly #rows = new Map<string, IndexRow>()
  /** The last revision of every entry ever seen, deleted ones included. */
  readonly #revs = new Map<string, number>()
  /** The last known signature of entries without a row (null: deleted). */
  readonly #lastSigs = new Map<string, string | null>()
  #revisionSum = 0
  #sorted: IndexRow[] | null = null
  readonly #dirty = new Set<string>()
  /** Files a rescan found for ids about to be re-checked: read again whatever their signature. */
  readonly #pendingFiles = new Map<string, string>()
  /** Ids that are listed unreadable whatever their file holds (a bad file name, two files). */
  #problems = new Map<string, string>()
  #dirMtime = -1
  #rescan = false
  /** Entries whose file the service is replacing or removing right now: settled when recorded. */
  readonly #writing = new Map<string, Promise<void>>()
  #loading: Promise<void> | null = null
  /** Resolves once a build made before the watcher listened has re-checked every file. */
  caughtUp: Promise<void> = Promise.resolve()
  /** How the last build went: rows taken from the store and files read. */
  loadStats: Readonly<{ fromStore: number, read: number }> = { fromStore: 0, read: 0 }
  #listening: boolean

  constructor (opts: IndexOptions) {
    this.collection = opts.collection
    this.#opts = opts
    this.#listening = opts.watching === undefined
    void opts.watching?.then(on => { this.#listening = on })
    this.#gitReal = path.join(opts.repoRealDir, '.git')
    const { dir, format, nested, indexFile, files, i18n } = opts.collection
    const roots = i18n === null || i18n.layout === 'suffix' || i18n.rootLocale !== null ? null : [...i18n.prefixes.values()]
    this.#layout = { dir, format, nested, indexFile, files, roots }
  }

  /**
   * Refuses (400) an id this collection cannot hold (a `/` in a flat collection, an id that is not
   * one of a `files` collection's, a path through a link leaving the folder).
   * @param id a valid entry id (grammar already checked)
   */
  checkId (id: string): void {
    const problem = idLayoutProblem(this.#layout, id)
    if (problem !== null) throw new BadRequestError(`Invalid entry id: it ${problem}`, { field: 'id' })
    if (id.includes('/') && !resolvesInside(this.checkFolder(), path.join(this.collection.dir, id))) {
      throw new BadRequestError('The entry path leaves the collection folder', { field: 'id' })
    }
  }

  /**
   * Refuses (400) a collection folder that leaves the repository or enters `.git` (a link on its way).
   * @returns the folder's real path
   */
  checkFolder (): string {
    const real = realPathOf(this.collection.dir)
    if (real === null || !isInside(this.#opts.repoRealDir, real) || isInside(this.#gitReal, real)) {
      throw new BadRequestError('The collection folder leaves the repository', { collection: this.collection.name })
    }
    return real
  }

  /**
   * Takes a file event from the watcher: its entry is re-checked on next read; anything else under
   * the folder asks for a rescan.
   * @param file absolute path that changed
   */
  onFileEvent (file: string): void {
    const rel = path.relative(this.collection.dir, file)
    if (rel === '' || !isInside(this.collection.dir, file)) { if (rel === '') this.#rescan = true; return }
    // Hidden names (temporary files of atomic writes among them) are never entries.
    if (rel.split(path.sep).some(s => s.startsWith('.') || s === 'node_modules')) return
    const id = idOfPath(this.#layout, rel)
    if (id === null) {
      if (this.#layout.files === null && (this.#layout.nested || this.#layout.indexFile !== null)) this.#rescan = true
      return
    }
    const known = this.#rows.get(id)
    if (known !== undefined && known.file !== file) this.#rescan = true
    this.#dirty.add(id)
  }

  /** Marks every entry as possibly changed on disk (events may have been lost). */
  markAllChanged (): void {
    this.#rescan = true
    for (const id of this.#rows.keys()) this.#dirty.add(id)
  }

  /**
   * Builds the index on first use (a failed build is tried again on the next call).
   * @returns resolves when every entry is indexed
   */
  async ready (): Promise<void> {
    this.#loading ??= this.#load().catch((err: unknown) => { this.#loading = null; throw err })
    await this.#loading
  }

  /**
   * All entries in list order, fresh with respect to the folder and the watcher.
   * @returns the sorted rows (do not mutate); `freshen` gives their full data
   */
  async all (): Promise<readonly IndexRow[]> {
    this.checkFolder()
    await this.ready()
    await this.#refreshDirectory()
    if (this.#dirty.size > 0) {
      const ids = [...this.#dirty]
      this.#dirty.clear()
      for (let i = 0; i < ids.length; i += CHUNK) {
        if (i > 0) await nextTurn()
        await Promise.all(ids.slice(i, i + CHUNK).map(async id => await this.#refresh(id)))
      }
    }
    this.#sorted ??= [...this.#rows.values()].sort(this.#compare)
    return this.#sorted
  }

  /**
   * One entry, re-checked against its file first.
   * @param id a valid entry id
   * @param opts `folderChecked`: the caller checked this entry's path with `fileOf` just before
   * @returns the entry, or null when it does not exist
   */
  async get (id: string, opts: { folderChecked?: boolean } = {}): Promise<IndexedEntry | null> {
    if (opts.folderChecked !== true) this.checkFolder()
    this.checkId(id)
    await this.ready()
    if (this.#rescan) await this.#refreshDirectory()
    this.#dirty.delete(id)
    return await this.#fresh(id)
  }

  /**
   * Re-checks the given entries against their files and gives them with all their data.
   * @param rows entries about to be returned
   * @param recheck false: as the index holds them (the search's catch-up), a Markdown file changed
   *   since its row with `sig: ''` and no body
   * @returns the same entries, fresh (dropping any deleted meanwhile)
   */
  async freshen (rows: readonly IndexRow[], recheck = true): Promise<IndexedEntry[]> {
    const fresh = await Promise.all(rows.map(async e => await this.#fresh(e.id, recheck)))
    return fresh.filter((e): e is IndexedEntry => e !== null)
  }

  /**
   * The revision an entry has, or had before it was deleted (0 when it never existed).
   * @param id entry id
   * @returns the revision number
   */
  lastRevision (id: string): number {
    return this.#revs.get(id) ?? 0
  }

  /** The collection's revision: the sum of its entries' revisions, deleted ones included. */
  get revision (): number {
    return this.#revisionSum
  }

  /**
   * Records a write the service made (file already replaced on disk).
   * @param id entry id
   * @param data the data written
   * @param written the file (from `fileOf`), the text written and the data's validation issues, when known
   * @returns the entry's new revision
   */
  async recordWrite (id: string, data: EntryData, written?: { file: string, text: string, issues?: ValidationIssue[] }): Promise<number> {
    const file = written?.file ?? this.fileOf(id)
    const sig = statEntryFileNow(this.#opts.repoRealDir, file)
    if (sig === null || sig === 'link-outside') throw new Error(`entry file vanished after write: ${file}`)
    const format = formatOfFile(file, this.collection.format)
    const asWritten = written !== undefined && Buffer.byteLength(written.text, 'utf8') === signatureSize(sig)
    const text = !isMarkdownFormat(format) ? null : asWritten ? written.text : await readTextIfUnchanged(file, sig)
    this.#problems.delete(id)
    const issues = written?.issues ?? await this.#opts.validate(data)
    const content = this.#content(id, data, text, format, issues)
    const rev = this.lastRevision(id) + 1
    this.#put(id, file, sig, rev, content)
    return rev
  }

  /**
   * Runs the service's own change of an entry's file: until it is recorded, a read waits for it
   * instead of taking it for an outside change (which would spend a revision of its own).
   * @param id entry id
   * @param change writes or removes the file and records it
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
    const deletion = this.#deleted(id)
    this.#opts.store.put(this.collection.name, [deletion])
    if (this.#rows.delete(id)) this.#sorted = null
    return deletion.rev
  }

  /**
   * The file path an entry has or would have, checked now the way a writer needs: its real path is
   * inside the collection folder's, which is inside the repository, and outside `.git`.
   * @param id a valid entry id
   * @returns absolute path
   */
  fileOf (id: string): string {
    this.checkId(id)
    const file = this.pathOf(id)
    if (file === null) throw new BadRequestError('Invalid entry id: it is not one of the collection\'s files', { field: 'id' })
    const folderReal = this.checkFolder()
    const real = realPathOf(file)
    if (real === null || !isInside(folderReal, real)) throw new BadRequestError('The entry path leaves the collection folder', { field: 'id' })
    if (isInside(this.#gitReal, real)) throw new ForbiddenError('Path is inside .git')
    return file
  }

  /**
   * The file path `fileOf` would give now, without any check.
   * @param id a valid entry id
   * @returns absolute path, or null when the id is not one of a `files` collection's
   */
  pathOf (id: string): string | null {
    return this.#rows.get(id)?.file ?? newFileOf(this.#layout, id)
  }

  async #load (): Promise<void> {
    this.checkFolder()
    const name = this.collection.name
    const scannedListening = this.#listening
    const found = await this.#scanDirectory()
    const changes: StoredEntry[] = []
    const toRead: Array<[string, string]> = []
    /** Ids checked before the watcher listened: a change since sent no event. */
    const unwatched: string[] = []
    for await (const page of this.#opts.store.pages(name, definitionKey(this.collection))) {
      for (const known of page) {
        const id = known.id
        this.#setRev(id, known.rev)
        const file = found.get(id)
        if (file === undefined) {
          this.#lastSigs.set(id, null)
          // A file deleted while the service was down: its deletion is a change too.
          if (known.sig !== null) changes.push(this.#deleted(id))
          continue
        }
        // Only a reusable row's file is stat-ed here (a file read stats itself).
        const reusable = known.content !== null && known.file === file && !this.#problems.has(id)
        if (reusable && !this.#listening) unwatched.push(id)
        const sig = reusable ? statEntryFileNow(this.#opts.repoRealDir, file) : null
        if (reusable && sig !== null && sig === known.sig && known.checkedAt - signatureCtime(sig) >= RACY_MS) {
          this.#rows.set(id, makeRow(id, file, sig, known.rev, JSON.parse(known.content!) as RowContent | { message: string }))
        } else {
          this.#lastSigs.set(id, known.sig)
          toRead.push([id, file])
        }
      }
    }
    // New entries in id order, so rows enter the store's B-tree in key order (100,000 puts: 1.2 s, not 8.5 s).
    const fresh = [...found.keys()].filter(id => !this.#revs.has(id)).sort()
    for (const id of fresh) toRead.push([id, found.get(id)!])
    this.loadStats = { fromStore: this.#rows.size, read: toRead.length }
    for (let i = 0; i < toRead.length; i += READ_CONCURRENCY) {
      if (i > 0) await nextTurn()
      const batch = toRead.slice(i, i + READ_CONCURRENCY)
      if (!this.#listening) for (const [id] of batch) unwatched.push(id)
      await Promise.all(batch.map(async ([id, file]) => {
        const change = await this.#read(id, file, false)
        if (change !== null) changes.push(change)
      }))
      if (changes.length >= CHUNK) this.#opts.store.put(name, changes.splice(0))
    }
    // A stored file that vanished before its read: deleted too.
    for (const [id] of toRead) if (!this.#rows.has(id) && this.#lastSigs.get(id) != null) changes.push(this.#deleted(id))
    this.#opts.store.put(name, changes)
    const watching = this.#opts.watching
    if (watching !== undefined && (!scannedListening || unwatched.length > 0)) {
      this.caughtUp = watching.then(async () => { await this.#recheck(unwatched, !scannedListening) })
    }
  }

  /** Counts an entry's deletion; gives the change to persist. */
  #deleted (id: string): StoredEntry {
    const rev = this.lastRevision(id) + 1
    this.#setRev(id, rev)
    this.#lastSigs.set(id, null)
    return { id, rev, sig: null, file: null, content: null, checkedAt: 0 }
  }

  /** Once the watcher listens: marks the rows whose file changed since they were checked. */
  async #recheck (ids: readonly string[], rescan: boolean): Promise<void> {
    if (!this.#listening) return
    // A flat folder's mtime tells adds and removals; deeper layouts need a scan.
    const { nested, indexFile, files, roots } = this.#layout
    if (rescan && (nested || indexFile !== null || files !== null || roots != null)) this.#rescan = true
    let n = 0
    for (const id of ids) {
      if (++n % CHUNK === 0) await nextTurn()
      const row = this.#rows.get(id)
      if (row !== undefined && statEntryFileNow(this.#opts.repoRealDir, row.file) !== row.sig) this.#dirty.add(id)
    }
  }

  /** Reads one file into the index; gives the change to persist (null: the file is missing). */
  async #read (id: string, file: string, persist = true): Promise<StoredEntry | null> {
    const format = formatOfFile(file, this.collection.format)
    const checkedAt = Date.now()
    const state = await readEntryFile(this.#opts.repoRealDir, file, format)
    if (state.kind === 'missing') return null
    const before = this.#rows.get(id)
    const known = before !== undefined ? before.sig : this.#lastSigs.get(id)
    // A signature stored without its ctime (an earlier version's): the same file when the rest matches.
    const same = known === state.sig || (known != null && Number.isNaN(signatureCtime(known)) && state.sig.startsWith(`${known}:`))
    const rev = same ? this.lastRevision(id) : this.lastRevision(id) + 1
    const problem = this.#problems.get(id)
    let content: RowContent | { message: string }
    if (state.kind !== 'ok' || problem !== undefined) {
      content = { message: problem ?? (state as { message: string }).message }
    } else {
      const checked = this.#opts.validate(state.data)
      const issues = checked instanceof Promise ? await checked : checked
      content = this.#content(id, state.data, state.text, format, issues)
    }
    return this.#put(id, file, state.sig, rev, content, checkedAt, persist)
  }

  /** Puts a row into the index and (unless `persist` is false) the store. */
  #put (id: string, file: string, sig: string, rev: number, content: RowContent | { message: string }, checkedAt = Date.now(), persist = true): StoredEntry {
    const before = this.#rows.get(id)
    const row = makeRow(id, file, sig, rev, content)
    this.#rows.set(id, row)
    this.#lastSigs.delete(id)
    this.#setRev(id, rev)
    if (this.#sorted !== null) {
      const at = before === undefined || before.order !== row.order ? -1 : this.#sorted.indexOf(before)
      if (at >= 0) this.#sorted[at] = row
      else this.#sorted = null
    }
    const stored: StoredEntry = { id, rev, sig, file, content: jsonOf(content), checkedAt }
    if (persist) this.#opts.store.put(this.collection.name, [stored])
    return stored
  }

  #setRev (id: string, rev: number): void {
    this.#revisionSum += rev - (this.#revs.get(id) ?? 0)
    this.#revs.set(id, rev)
  }

  /** Re-checks one entry's file (unless `recheck` is false) and gives it with all its data. */
  async #fresh (id: string, recheck = true): Promise<IndexedEntry | null> {
    const row = recheck ? await this.#refresh(id) : this.#rows.get(id) ?? null
    if (row === null) return null
    if (row.bodyAt === undefined) return entryOf(row, row.fields)
    const text = await readTextIfUnchanged(row.file, row.sig)
    if (text !== null) return { ...entryOf(row, { ...row.fields, body: text.slice(row.bodyAt) }), text }
    if (!recheck) return { ...entryOf(row, row.fields), sig: '' }
    // Changed since the stat a moment ago: read it again.
    const again = await this.#refresh(id)
    return again === null ? null : entryOf(again, again.bodyAt === undefined ? again.fields : { ...again.fields, body: '' })
  }

  /** Re-checks one entry's file; re-reads it only when its signature changed. */
  async #refresh (id: string): Promise<IndexRow | null> {
    const writing = this.#writing.get(id)
    if (writing !== undefined) await writing
    const current = this.#rows.get(id)
    const pending = this.#pendingFiles.get(id)
    this.#pendingFiles.delete(id)
    const file = pending ?? current?.file ?? this.#findFile(id)
    const sig = file === null ? null : statEntryFileNow(this.#opts.repoRealDir, file)
    if (current !== undefined && pending === undefined && sig === current.sig) return current
    if (file === null || sig === null) {
      if (current !== undefined) await this.recordDelete(id)
      return null
    }
    if (await this.#read(id, file) === null) {
      if (this.#rows.has(id)) await this.recordDelete(id)
      return null
    }
    return this.#rows.get(id) ?? null
  }

  /** Rescans when the folder's mtime changed or the watcher saw a change no single entry explains. */
  async #refreshDirectory (): Promise<void> {
    let mtime = 0
    try { mtime = statSync(this.collection.dir).mtimeMs } catch {}
    if (mtime === this.#dirMtime && !this.#rescan && this.#layout.files === null) return
    this.#rescan = false
    const before = this.#problems
    const onDisk = await this.#scanDirectory()
    for (const id of this.#rows.keys()) if (!onDisk.has(id)) this.#dirty.add(id)
    for (const [id, file] of onDisk) {
      // New, another file now, or its problem came or went: read again.
      if (this.#rows.get(id)?.file !== file || before.get(id) !== this.#problems.get(id)) {
        this.#pendingFiles.set(id, file)
        this.#dirty.add(id)
      }
    }
  }

  async #scanDirectory (): Promise<Map<string, string>> {
    try { this.#dirMtime = statSync(this.collection.dir).mtimeMs } catch { this.#dirMtime = 0 }
    const { found, problems } = await scanLayout(this.#layout)
    this.#problems = problems
    return found
  }

  /** The file of an id not (yet) indexed: the first candidate that exists, inside the folder. */
  #findFile (id: string): string | null {
    const folderReal = this.checkFolder()
    for (const file of candidateFiles(this.#layout, id)) {
      if (resolvesInside(folderReal, file) && statEntryFileNow(this.#opts.repoRealDir, file) !== null) return file
    }
    return null
  }

  /** An entry's indexed content; `text`: the file's text when known to be the one `data` came from. */
  #content (id: string, data: EntryData, text: string | null, format: EntryFormat, issues: ValidationIssue[]): RowContent {
    const order = data[this.collection.orderField]
    const content: RowContent = { fields: data, title: titlesOf(data, this.collection.titleField)[0] ?? id, order: typeof order === 'number' ? order : null }
    if (issues.length > 0) content.validationIssues = issues
    const bodyAt = isMarkdownFormat(format) && text !== null ? bodyStart(data, text) : null
    if (bodyAt !== null) {
      const { body: _body, ...fields } = data
      content.fields = fields
      content.bodyAt = bodyAt
    }
    return content
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

/** The content as JSON, or null when JSON cannot carry it exactly (read again at the next start). */
function jsonOf (content: RowContent | { message: string }): string | null {
  let exact = true
  const json = JSON.stringify(content, function (this: Record<string, unknown>, key: string, value: unknown) {
    const raw = this[key]
    if (typeof raw === 'bigint' || raw instanceof Date || (typeof raw === 'number' && !Number.isFinite(raw))) {
      exact = false
      return null
    }
    return value
  })
  return exact ? json : null
}

function entryOf (row: IndexRow, data: EntryData | undefined): IndexedEntry {
  const { fields: _fields, bodyAt: _bodyAt, ...entry } = row
  return data === undefined ? entry : { ...entry, data }
}

/** A row from an entry's content, or from the reason its file cannot be read. */
function makeRow (id: string, file: string, sig: string, revision: number, content: RowContent | { message: string }): IndexRow {
  if ('message' in content) return { id, file, sig, revision, readError: { message: content.message }, title: id, order: null }
  return { id, file, sig, revision, ...content }
}

/** Where the body starts in the text, when the text ends with it and it is the last field (else null). */
function bodyStart (data: EntryData, text: string): number | null {
  const body = data.body
  if (typeof body !== 'string' || !text.endsWith(body)) return null
  let last: string | undefined
  for (const key in data) last = key
  return last === 'body' ? text.length - body.length : null
}
