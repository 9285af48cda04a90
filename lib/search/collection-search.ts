/**
 * The full-text search of one collection: builds its index in the background (after the
 * collection index is ready, in a worker for a big collection), keeps it current from the
 * collection index's changes (service writes and deletions, outside changes it notices through
 * the watcher or a sync), and makes a search before the index is built wait for it (never an
 * answer from part of the index). Changes seen while a build runs are replayed onto it.
 *
 * Each full build is persisted (search-snapshot.ts). The first build of a process loads that file
 * instead when it matches: every document whose file's row now has another signature (or no row)
 * is dropped and its entry read again into the overlay, entries with a row but no document are
 * read into the overlay, and only then is the index served.
 */
import type { EntryData } from '../content/formats.js'
import { readEntryFile } from '../storage/entry-file.js'
import { formatOfFile } from '../storage/entry-paths.js'
import { sortedIndexOf } from './sorted-ids.js'
import type { IndexRow } from '../storage/index-row.js'
import { RACY_MS, signatureCtime } from '../storage/file-signature.js'
import type { Collection } from '../storage/collection-registry.js'
import type { CollectionIndex } from '../storage/collection-index.js'
import { createHash } from 'node:crypto'
import { entryTerms, IN_TITLE, type EntryTerms } from './entry-terms.js'
import { isTitleKey, titlesOf } from '../content/entry-search.js'
import { forEachTerm } from './tokenize.js'
import { FullTextIndex } from './full-text-index.js'
import { MAX_DOCS } from './ranking.js'
import { INLINE_MAX_FILES, readSegment, writeSegmentFile } from './segment-reader.js'
import { randomBytes } from 'node:crypto'
import { SearchSegment } from './search-segment.js'
import { SegmentFileChanged } from './segment-file.js'
import type { SearchSnapshot } from './search-snapshot.js'

/**
 * The overlay of changed entries is folded into a new segment (a background rebuild) beyond this
 * many changed entries plus a tenth of the entries (as the README says), or beyond twice as many
 * overlay units (overlay documents plus segment documents dropped: an entry changed once takes two,
 * and one changed again and again, body included, one more each time).
 */
const OVERLAY_REBUILD = 2000
/** How long after a build its segment is persisted (also on close). */
const PERSIST_DELAY_MS = 200
/** Entry files read at once when a loaded segment's changed entries are read again. */
const READ_CONCURRENCY = 8

/** What a full build persists: its documents' ids and the signature of each one's file when the build started. */
interface BuildRecord {
  index: FullTextIndex
  ids: string[]
  sigs: string[]
  startedAt: number
}

const searches = new WeakMap<CollectionIndex, CollectionSearch>()

/** How many entries `#retitle` remembers (a few hundred bytes each). */
const TITLED_MAX = 2048

/** Saves recorded at most before they are indexed without waiting for a read (`#drain`). */
const CHANGES_MAX = 4096

/** What is remembered of an entry indexed into an overlay document. */
interface TitledDoc {
  /** The overlay document of the index built now that its terms went into. */
  doc: number
  /** A digest of everything but the title fields' strings (the body included). */
  rest: string
  /** The terms of its id and title fields. */
  title: Set<string>
}

/**
 * A digest of an entry's data without its title fields' string values (their keys and order kept):
 * two entries with the same one differ at most in their titles' text.
 */
function titleFreeKey (data: EntryData, titleField: string | null): string {
  // One string hashed once; a string value goes in as it is, after its length (JSON.stringify of
  // a Markdown body copied and escaped it, twice per saved entry: issue 18). Unambiguous: a key is
  // a JSON string, then `\u0000title` (a title string), `:s<length>:` and the string, or `:` and
  // the JSON of any other value (which never starts with `s`) and `\u0000`. (Hashed as UTF-8, lone
  // surrogates all become U+FFFD: they make no terms, so the terms still agree.)
  let text = ''
  try {
    for (const key of Object.keys(data)) {
      const value = data[key]
      text += JSON.stringify(key)
      if (typeof value !== 'string') text += `:${JSON.stringify(value) ?? 'undefined'}\u0000`
      else text += isTitleKey(key, titleField) ? '\u0000title' : `:s${value.length}:${value}`
    }
  } catch {
    // A value JSON cannot write (a BigInt): such an entry is always indexed in full.
    return ''
  }
  return createHash('sha256').update(text).digest('base64')
}

/** The terms `entryTerms` flags IN_TITLE: the id's and the title fields'. */
function titleTerms (id: string, data: EntryData, titleField: string | null): Set<string> {
  const terms = new Set<string>()
  const add = (term: string): void => { terms.add(term) }
  forEachTerm(id, add)
  for (const title of titlesOf(data, titleField)) forEachTerm(title, add)
  return terms
}

/**
 * The search of a collection index.
 * @param index a collection index
 * @returns its search, or undefined when none was attached
 */
export function searchOf (index: CollectionIndex): CollectionSearch | undefined {
  return searches.get(index)
}

/** Full-text search over one collection. */
export class CollectionSearch {
  readonly #collection: Collection
  readonly #repoRealDir: string
  #index: CollectionIndex | null = null
  #built: FullTextIndex | null = null
  #building: Promise<FullTextIndex> | null = null
  /** Changes seen while a build runs (latest per id; null: removed). */
  #pending: Map<string, EntryTerms | null> | null = null
  readonly #overlayRebuild: number
  #builds = 0
  readonly #snapshot: SearchSnapshot | null
  /** Whether the persisted segment was tried (only by the first build of a process). */
  #snapshotTried = false
  #loadStats = { fromSnapshot: 0, read: 0 }
  #fileBuildStats = { reused: 0, entries: 0 }
  /** The last full build, not persisted yet. */
  #unpersisted: BuildRecord | null = null
  #persistTimer: NodeJS.Timeout | null = null
  #persisting: Promise<void> = Promise.resolve()
  /** Set by `flush` (on close): later builds are not persisted. */
  #closed = false
  /** Aborted by `flush`: kills a search process building the segment file. */
  readonly #abort = new AbortController()
  /** The search process building the segment file, until it exited. */
  #writing: Promise<void> | null = null
  /** Entries last indexed into an overlay document, for `#retitle` (oldest first, at most TITLED_MAX). */
  readonly #titled = new Map<string, TitledDoc>()
  /**
   * Changes recorded by `onEntryChange` and not indexed yet (latest data per id; null: removed):
   * `#drain` indexes them before anything reads the index, each entry once however often it was saved.
   */
  #changes = new Map<string, EntryData | undefined | null>()

  /**
   * @param collection the collection
   * @param repoRealDir the repository's real path
   * @param opts `overlayRebuild`: changed entries (beyond a tenth of all) that start a rebuild;
   *   `snapshot`: where the segment is persisted (none: built at every start)
   */
  constructor (collection: Collection, repoRealDir: string, opts: { overlayRebuild?: number, snapshot?: SearchSnapshot | null } = {}) {
    this.#collection = collection
    this.#repoRealDir = repoRealDir
    this.#overlayRebuild = opts.overlayRebuild ?? OVERLAY_REBUILD
    this.#snapshot = opts.snapshot ?? null
  }

  /**
   * Ties this search to its collection index (which calls `onEntryChange`).
   * @param index the collection's index
   */
  attach (index: CollectionIndex): void {
    this.#index = index
    searches.set(index, this)
  }

  /**
   * Takes an entry change from the collection index: its data now (undefined when the file
   * cannot be read: the id alone stays searchable), or null when it was removed. Before any build
   * started there is nothing to update: the build reads the files afterwards. Only recorded here
   * (the latest per id): `#drain` indexes it before the next read of the index, so a save does not
   * tokenize its entry, and an entry saved again and again before a search is tokenized once.
   * @param id entry id
   * @param data its data, undefined or null
   */
  readonly onEntryChange = (id: string, data: EntryData | undefined | null): void => {
    if (this.#built === null && this.#pending === null) return
    const changes = this.#changes
    changes.delete(id)
    changes.set(id, data)
    // Bounded, and indexed once the changed entries may reach a rebuild's count (which `#drain`
    // then starts, as each change did before).
    const built = this.#built
    const limit = built === null ? 0 : this.#overlayRebuild + built.size / 10
    if (changes.size >= CHANGES_MAX || (built !== null && (built.changedEntries + changes.size > limit || built.overlaySize + 2 * changes.size > 2 * limit))) this.#drain()
  }

  /**
   * Indexes the changes recorded by `onEntryChange` (in the order they last changed): into the
   * build running (replayed onto it when it ends) and the index built, then starts a rebuild if the
   * overlay grew past its limit. Called before every read of the index.
   */
  #drain (): void {
    const changes = this.#changes
    if (changes.size === 0) return
    this.#changes = new Map()
    if (this.#built === null && this.#pending === null) return
    for (const [id, data] of changes) this.#apply(id, data)
    this.#rebuildIfOverlayBig()
  }

  /** Indexes one entry change (as `onEntryChange` did on every save before `#drain`). */
  #apply (id: string, data: EntryData | undefined | null): void {
    if (this.#retitle(id, data)) return
    const terms = data === null ? null : entryTerms(id, data, this.#collection.titleField)
    this.#pending?.set(id, terms)
    const built = this.#built
    if (built === null) return
    if (terms === null) built.remove(id)
    else built.set(id, terms)
    this.#remember(id, data, terms)
  }

  /**
   * A change of an entry whose last change this search indexed into an overlay document, and that
   * changes nothing but its title fields' text (a title save): only the title's terms are patched in
   * that document, instead of tokenizing the whole entry, body included, and adding a new document
   * (which also made the overlay, and so the rebuilds, grow with every save; issue 18).
   * @returns true when done so (false: index the entry in full)
   */
  #retitle (id: string, data: EntryData | undefined | null): boolean {
    const built = this.#built
    const last = this.#titled.get(id)
    if (last === undefined) return false
    this.#titled.delete(id)
    if (built === null || this.#pending !== null || data === null || data === undefined) return false
    const doc = built.overlayDocOf(id)
    if (doc !== last.doc || last.rest === '' || titleFreeKey(data, this.#collection.titleField) !== last.rest) return false
    const now = titleTerms(id, data, this.#collection.titleField)
    const flags = new Map<string, number>()
    for (const term of new Set([...last.title, ...now])) {
      const before = built.overlayFlags(doc, term)
      const after = (before & ~IN_TITLE) | (now.has(term) ? IN_TITLE : 0)
      if (after !== before) flags.set(term, after)
    }
    built.patchOverlayDoc(doc, flags)
    this.#titled.set(id, { doc, rest: last.rest, title: now })
    return true
  }

  /** Remembers what `#retitle` needs of an entry just indexed into an overlay document. */
  #remember (id: string, data: EntryData | undefined | null, terms: EntryTerms | null): void {
    const built = this.#built
    this.#titled.delete(id)
    if (built === null || terms === null || data === null || data === undefined) return
    const doc = built.overlayDocOf(id)
    if (doc < 0) return
    if (this.#titled.size >= TITLED_MAX) this.#titled.delete(this.#titled.keys().next().value as string)
    this.#titled.set(id, { doc, rest: titleFreeKey(data, this.#collection.titleField), title: titleTerms(id, data, this.#collection.titleField) })
  }

  #rebuildIfOverlayBig (): void {
    const built = this.#built
    if (built === null || this.#building !== null) return
    // Counted in entries, as documented: counted in overlay units, a rebuild came at half the
    // changed entries (issue 18, ninth pass: every 1,500 entries saved at 10,000 entries).
    const limit = this.#overlayRebuild + built.size / 10
    if (built.changedEntries > limit || built.overlaySize > 2 * limit) this.#startBuild()
  }

  /**
   * Starts building the index in the background, unless it is built or being built.
   */
  start (): void {
    if (this.#built === null) this.#startBuild()
  }

  /**
   * Resolves once no build runs and the last full build is persisted (the start's work of this
   * search done: young-generation-cap.ts `afterStart`); never rejects.
   * @returns resolves when settled
   */
  async settled (): Promise<void> {
    for (;;) {
      const building = this.#building
      if (building !== null) { await building.catch(() => {}); continue }
      // The persist timer was set before this one: it has fired (and #persisting is its write) by then.
      if (this.#persistTimer !== null) { await new Promise(resolve => setTimeout(resolve, PERSIST_DELAY_MS)); continue }
      await this.#persisting
      if (this.#building === null && this.#persistTimer === null) return
    }
  }

  /** Full builds finished (the first one unless the persisted segment was loaded, and each rebuild). */
  get builds (): number {
    this.#drain()
    return this.#builds
  }

  /**
   * How the persisted segment was used: documents taken from it, and entries read from their
   * files into the overlay (both 0 when it was not used).
   */
  get loadStats (): { fromSnapshot: number, read: number } {
    return { ...this.#loadStats }
  }

  /**
   * Persists the last build now if it is not yet (on close). A build still running then is not
   * persisted when it ends: nothing is written under the state folder after its instance closed.
   * @returns resolves once written (a failure is ignored: the file is only a hint)
   */
  async flush (): Promise<void> {
    this.#drain()
    this.#closed = true
    if (this.#persistTimer !== null) { clearTimeout(this.#persistTimer); this.#persistTimer = null }
    // A search process writing the file is killed, and gone before this resolves.
    this.#abort.abort()
    await this.#writing?.catch(() => {})
    await this.#persist()
  }

  /** Starts a build (the first, or a rebuild that folds the changed entries in). */
  #startBuild (): void {
    // Indexed first (into the index it replaces, or dropped when there is none: the build reads the files).
    this.#drain()
    if (this.#building !== null) return
    this.#pending = new Map()
    const building = this.#build()
    this.#building = building
    // A failed build is tried again by the next search (which then reports its error).
    building.catch(() => {}).finally(() => {
      if (this.#building === building) { this.#building = null; this.#pending = null }
      // A loaded segment whose files changed a lot while the service was down is built afresh
      // (after a build, the next change decides, as before).
      if (this.#builds === 0 && this.#built !== null) this.#rebuildIfOverlayBig()
    })
  }

  /**
   * The index, once built (starting the build if none ran).
   * @returns the built index
   */
  async ready (): Promise<FullTextIndex> {
    this.#drain()
    if (this.#built !== null) return this.#built
    if (this.#building === null) this.#startBuild()
    const built = await (this.#building as Promise<FullTextIndex>)
    // Changes recorded after the hand-over.
    this.#drain()
    return this.#built ?? built
  }

  /**
   * Runs a search over the index once built. When the persisted segment the index reads from
   * changed or went away under it (segment-file.ts), the index is built afresh from the files and
   * the search runs again on that: it never answers from another file's postings.
   * @param search what to do with the index (synchronous: the index may change at the next await)
   * @returns what it returned
   */
  async use<T> (search: (index: FullTextIndex) => T): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const index = await this.ready()
      // Saves recorded while the answer to `ready` was on its way too (never a stale search).
      this.#drain()
      try {
        return search(index)
      } catch (err) {
        if (!(err instanceof SegmentFileChanged) || attempt > 0) throw err
        if (this.#built === index) {
          this.#built = null
          this.#startBuild()
        }
      }
    }
  }

  /**
   * What the last build by the search process took: documents reused from the previous segment
   * file (merge-segment.ts) and the entries it was given (both 0 before one ran).
   */
  get fileBuildStats (): { reused: number, entries: number } {
    return { ...this.#fileBuildStats }
  }

  /** Bytes the built index's arrays hold (0 before it is built). */
  get bytes (): number {
    this.#drain()
    return this.#built?.bytes ?? 0
  }

  async #build (): Promise<FullTextIndex> {
    const index = this.#index
    if (index === null) throw new Error('search not attached to a collection index')
    const rows = await index.all()
    // A load that fails half-way (a file unreadable in an unexpected way) is a full build too.
    const loaded = this.#snapshot !== null && !this.#snapshotTried ? await this.#load(rows).catch(() => null) : null
    this.#snapshotTried = true
    if (loaded !== null) this.#loadStats = loaded.stats
    const fresh = loaded?.index ?? await this.#fullBuild(rows, index)
    // The changes seen meanwhile, then the swap, in one synchronous step: none falls between.
    this.#drain()
    for (const [id, terms] of this.#pending ?? []) {
      if (terms === null) fresh.remove(id)
      else fresh.set(id, terms)
    }
    if (fresh.size + fresh.overlaySize >= MAX_DOCS) throw new Error('too many entries for the full-text index')
    this.#built = fresh
    // What `#retitle` remembered is of the index replaced (and must not keep it alive).
    this.#titled.clear()
    this.#pending = null
    if (loaded === null) this.#builds++
    return fresh
  }

  /**
   * Reads every file into a new segment: for a big collection with a persisted segment, in the
   * search process, which writes the file this thread then loads (`#buildFile`); else (or when
   * that fails) in the worker, and plans its persisting.
   */
  async #fullBuild (rows: readonly IndexRow[], index: CollectionIndex): Promise<FullTextIndex> {
    if (this.#snapshot !== null && !this.#closed && rows.length >= INLINE_MAX_FILES) {
      const loaded = await this.#buildFile(rows, index, this.#snapshot).catch(() => null)
      if (loaded !== null) return loaded
      // Closed meanwhile (the process killed): nothing more to build for a store that is gone.
      if (this.#closed) throw new Error('full-text index build cancelled: the service is closing')
    }
    const startedAt = Date.now()
    const files: Array<[string, string]> = rows.map(r => [r.id, r.file])
    const sigs = rows.map(r => r.sig)
    const built = await readSegment({ repoRealDir: this.#repoRealDir, files, format: this.#collection.format, titleField: this.#collection.titleField })
    const ids = Array.from(built.order, i => (files[i] as [string, string])[0])
    const fresh = new FullTextIndex(new SearchSegment(built.segment), ids)
    if (this.#snapshot !== null && !this.#closed) {
      this.#unpersisted = { index: fresh, ids, sigs: Array.from(built.order, i => sigs[i] as string), startedAt }
      if (this.#persistTimer === null) {
        this.#persistTimer = setTimeout(() => { this.#persistTimer = null; void this.#persist() }, PERSIST_DELAY_MS)
        this.#persistTimer.unref()
      }
    }
    return fresh
  }

  /**
   * Builds the segment file in the search process and loads it like a restart does, with the rows
   * as they are once it is written: an entry whose row changed meanwhile is read again (and the
   * changes seen meanwhile are replayed by `#build`). Its documents are recorded with the
   * signatures their rows had when it started, '' for a file changed too shortly before to be
   * trusted at a later start (racy, as `#persist` does); in this process those documents count
   * while their row still has that signature (as a build in the worker takes what it read).
   * @returns the loaded index, or null when the process failed or its file is in doubt
   */
  async #buildFile (rows: readonly IndexRow[], index: CollectionIndex, snapshot: SearchSnapshot): Promise<FullTextIndex | null> {
    const startedAt = Date.now()
    const build = randomBytes(12).toString('hex')
    const racy = new Map<string, string>()
    const sigs = rows.map(row => {
      const ctime = signatureCtime(row.sig)
      if (Number.isFinite(ctime) && ctime < startedAt - RACY_MS) return row.sig
      racy.set(row.id, row.sig)
      return ''
    })
    // What the segment file holds now is reused wherever its recorded signature is the row's (a
    // rebuild reads only the entries changed since: merge-segment.ts).
    const job = { repoRealDir: this.#repoRealDir, format: this.#collection.format, titleField: this.#collection.titleField, rows, sigs, place: snapshot.place, build, reuse: true }
    const writing = writeSegmentFile(job, this.#abort.signal)
    // Settles once the process exited, however it ended (`flush` waits for it; never a rejection of its own).
    const exited = writing.then(() => {}, () => {})
    this.#writing = exited
    try {
      const { reused } = await writing
      this.#fileBuildStats = { reused, entries: rows.length }
    } finally {
      if (this.#writing === exited) this.#writing = null
    }
    if (this.#closed) return null
    return (await this.#load(await index.all(), build, racy))?.index ?? null
  }

  /**
   * The persisted segment with the collection's current rows laid over it, or null when there is
   * none or it is in doubt. A document counts only while its entry's row has the signature of the
   * file it was built from; every other entry is read from its file into the overlay.
   * @param rows the collection's rows now
   * @param build the token of the build whose file to take (see `#buildFile`), if one
   * @param racy signatures to count for documents recorded with '' (see `#buildFile`), by id
   * @returns the index and what it took from the file and read, or null
   */
  async #load (rows: readonly IndexRow[], build?: string, racy?: ReadonlyMap<string, string>): Promise<{ index: FullTextIndex, stats: { fromSnapshot: number, read: number } } | null> {
    const persisted = await (this.#snapshot as SearchSnapshot).read(build)
    if (persisted === null) return null
    const fresh = new FullTextIndex(persisted.segment, persisted.ids)
    // No map or set per id (100,000 of them): the ids are sorted, a row finds its document by
    // binary search, and a byte a document marks the ones that still have a row.
    const ids = persisted.ids as string[]
    const hasRow = new Uint8Array(ids.length)
    const toRead: IndexRow[] = []
    for (const row of rows) {
      const doc = sortedIndexOf(ids, row.id)
      if (doc < 0) { toRead.push(row); continue }
      hasRow[doc] = 1
      // The row's own string (equal): the file's copy goes (100,000 ids, ~3 MB).
      ids[doc] = row.id
      const sig = (persisted.sigs[doc] as string) || (racy?.get(row.id) ?? '')
      if (sig === '' || sig !== row.sig) { fresh.remove(row.id); toRead.push(row) }
    }
    for (let doc = 0; doc < ids.length; doc++) if (hasRow[doc] === 0) fresh.remove(ids[doc] as string)
    const format = this.#collection.format
    const titleField = this.#collection.titleField
    let next = 0
    const worker = async (): Promise<void> => {
      while (next < toRead.length) {
        const row = toRead[next++] as IndexRow
        const state = await readEntryFile(this.#repoRealDir, row.file, formatOfFile(row.file, format))
        if (state.kind === 'missing') fresh.remove(row.id)
        else fresh.set(row.id, entryTerms(row.id, state.kind === 'ok' ? state.data : undefined, titleField))
      }
    }
    await Promise.all(Array.from({ length: READ_CONCURRENCY }, worker))
    return { index: fresh, stats: { fromSnapshot: rows.length - toRead.length, read: toRead.length } }
  }

  /**
   * Writes the last full build: each document with the signature its file had when the build
   * started, or '' (not to be trusted at the next start) when its entry changed since or its file
   * was changed too shortly before the build to tell a later change by its signature (racy).
   */
  async #persist (): Promise<void> {
    this.#drain()
    const record = this.#unpersisted
    const snapshot = this.#snapshot
    if (record === null || snapshot === null) { await this.#persisting; return }
    this.#unpersisted = null
    const segment = record.index.segment
    const data = segment.data
    if (data === null) { await this.#persisting; return }
    const sigs = record.sigs.map((sig, doc) => {
      const ctime = signatureCtime(sig)
      return record.index.isBaseLive(doc) && Number.isFinite(ctime) && ctime < record.startedAt - RACY_MS ? sig : ''
    })
    const write = this.#persisting.then(async () => {
      // From then on the segment's terms and postings are read from the file it was written to.
      segment.useSource(await snapshot.write({ segment: data, ids: record.ids, sigs }))
    }).catch(() => {})
    this.#persisting = write
    await write
  }
}
