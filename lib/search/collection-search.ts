/**
 * The full-text search of one collection: a SearchDb kept in step with the collection index, which
 * reindexes at its first open the entries whose signature changed, then the reported changes in
 * batches. SiteSearch makes one beside each collection index (the content store calls its
 * `companion`: storage knows only the IndexCompanion shape) and answers `q` for one editor: the
 * base entries from the index (those the editor has a draft of left out), and the editor's own
 * drafts (their data laid over base, deletions hidden) tiered the same way, first within their tier.
 */
import { rm } from 'node:fs/promises'
import { setImmediate as nextTurn } from 'node:timers/promises'
import path from 'node:path'
import type { EntryData } from '../content/formats.js'
import type { CollectionIndex, IndexRow } from '../storage/collection-index.js'
import type { IndexCompanion } from '../storage/content-store.js'
import type { DraftRecord } from '../storage/draft-store.js'
import { RACY_MS, signatureCtime } from '../storage/file-signature.js'
import { entryText, tierOf } from './entry-text.js'
import { isDamaged, SearchDb } from './search-db.js'
import type { SearchQuery } from './tokenize.js'

/** One entry found: a base entry (draft null) or the editor's draft of one. */
export interface FoundEntry {
  id: string
  draft: DraftRecord | null
}

/** Where the databases are, under the state folder (`.git/cms`). */
const SEARCH_DIR = 'fts'
/** The folder where earlier versions kept their search index, removed at the first open. */
const LEGACY_DIR = 'search'
/** Entries read and indexed per transaction while opening, so the event loop turns between chunks. */
const CHUNK = 64
/** Recorded changes beyond this many are indexed without waiting for a search. */
const CHANGES_MAX = 100

/** Full-text search over one collection. */
export class CollectionSearch {
  readonly #index: CollectionIndex
  readonly #file: string
  readonly #stateDir: string
  #db: SearchDb | null = null
  #opening: Promise<SearchDb> | null = null
  /** Changes not indexed yet, latest per id (undefined: unreadable, null: removed). */
  #changes = new Map<string, EntryData | undefined | null>()
  #drainQueued = false
  #closed = false
  #builds = 0
  #loadStats = { fromSnapshot: 0, read: 0 }

  /** @param stateDir the state folder (`.git/cms`) the database goes under */
  constructor (index: CollectionIndex, stateDir: string) {
    this.#index = index
    this.#stateDir = stateDir
    this.#file = path.join(stateDir, SEARCH_DIR, `${index.collection.name}.sqlite`)
  }

  /** Records an entry change (undefined: unreadable, the id stays searchable; null: removed). */
  readonly onEntryChange = (id: string, data: EntryData | undefined | null): void => {
    if (this.#closed || this.#opening === null) return
    this.#changes.delete(id)
    this.#changes.set(id, data)
    if (this.#db === null || this.#changes.size < CHANGES_MAX || this.#drainQueued) return
    // After the save that reported it; a failure drops the database, which the next search builds again.
    this.#drainQueued = true
    setImmediate(() => {
      this.#drainQueued = false
      try { if (this.#db !== null) this.#drain(this.#db) } catch {}
    })
  }

  /** Opens the index in the background; never rejects (a failure is reported to the next search). */
  async start (): Promise<void> {
    if (!this.#closed) await this.#open().then(() => {}, () => {})
  }

  /** Waits until the index is open and holds every change reported so far. */
  async ready (): Promise<void> {
    await this.use(() => {})
  }

  /** Times the index was built from every entry (a new or doubtful database). */
  get builds (): number {
    return this.#builds
  }

  /** What the last open of an existing database kept (`fromSnapshot`) and read again (`read`). */
  get loadStats (): { fromSnapshot: number, read: number } {
    return { ...this.#loadStats }
  }

  /**
   * Runs a search over the index once open, with every change reported so far indexed. A damaged
   * database is removed and built again, and the search runs again on that.
   */
  async use<T> (search: (db: SearchDb) => T): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const db = await this.#open()
      if (this.#db !== db) throw new Error('The full-text index is closed')
      try {
        this.#drain(db)
        return search(db)
      } catch (err) {
        // Retried once on a database built again: damaged, or dropped by a failed #drain.
        if (attempt > 0 || !(isDamaged(err) || this.#db !== db)) throw err
        this.#discard(db)
      }
    }
  }

  /** Indexes the recorded changes, then closes the database (on shutdown); never rejects. */
  async flush (): Promise<void> {
    this.#closed = true
    await this.#opening?.catch(() => {})
    const db = this.#db
    this.#db = null
    if (db === null) return
    try { this.#drain(db) } catch {}
    db.close()
  }

  #open (): Promise<SearchDb> {
    if (this.#closed) return Promise.reject(new Error('The full-text index is closed'))
    if (this.#opening !== null) return this.#opening
    const opening = this.#load()
    this.#opening = opening
    // A failed open is tried again by the next search (which reports its error).
    opening.catch(() => { if (this.#opening === opening) this.#opening = null })
    return opening
  }

  async #load (): Promise<SearchDb> {
    const index = this.#index
    const rows = await index.all()
    await rm(path.join(this.#stateDir, LEGACY_DIR), { recursive: true, force: true }).catch(() => {})
    const { format, titleField } = index.collection
    // Opening a database is a few ms of synchronous work: in a turn of its own.
    await nextTurn()
    if (this.#closed) throw new Error('The full-text index closed while it opened')
    const db = SearchDb.open(this.#file, JSON.stringify({ format, titleField }))
    try {
      const stored = db.signatures()
      const toRead: IndexRow[] = []
      for (const row of rows) {
        const sig = stored.get(row.id)
        stored.delete(row.id)
        if (sig === undefined || sig === '' || sig !== row.sig) toRead.push(row)
      }
      db.transaction(() => { for (const id of stored.keys()) db.remove(id) })
      for (let i = 0; i < toRead.length; i += CHUNK) {
        // A turn between chunks: a build of 100,000 entries otherwise held every request for 30 s or more.
        if (i > 0) await nextTurn()
        if (this.#closed) throw new Error('The full-text index closed while it opened')
        const chunk = toRead.slice(i, i + CHUNK)
        // As the index holds them: a re-check here could read an outside writer's file half-way.
        const entries = await index.peek(chunk)
        const now = Date.now()
        db.transaction(() => {
          const found = new Set<string>()
          for (const entry of entries) {
            found.add(entry.id)
            // A file changed that close to now may change again unseen: its signature is not kept.
            db.put(entry.id, entryText(entry.id, entry.data, titleField), signatureCtime(entry.sig) < now - RACY_MS ? entry.sig : '')
          }
          // Removed meanwhile.
          for (const row of chunk) if (!found.has(row.id)) db.remove(row.id)
        })
      }
      if (this.#closed) throw new Error('The full-text index closed while it opened')
      if (db.created) this.#builds++
      else this.#loadStats = { fromSnapshot: rows.length - toRead.length, read: toRead.length }
      this.#db = db
      return db
    } catch (err) {
      db.close()
      throw err
    }
  }

  /** Indexes the recorded changes in one transaction; a failure drops the database. */
  #drain (db: SearchDb): void {
    if (this.#changes.size === 0) return
    const changes = this.#changes
    this.#changes = new Map()
    const titleField = this.#index.collection.titleField
    try {
      db.transaction(() => {
        for (const [id, data] of changes) {
          if (data === null) db.remove(id)
          // Signature '': the hook does not say which file state the data came from, so the next start reads it again.
          else db.put(id, entryText(id, data, titleField), '')
        }
      })
    } catch (err) {
      this.#discard(db)
      throw err
    }
  }

  /** Drops a damaged database: the next use builds it again from every entry. */
  #discard (db: SearchDb): void {
    if (this.#db !== db) return
    try { db.close() } catch {}
    SearchDb.remove(this.#file)
    this.#db = null
    this.#opening = null
    this.#changes = new Map()
  }
}

/** Owns the search of every collection index of one service instance. */
export class SiteSearch {
  readonly #stateDir: string
  readonly #byIndex = new WeakMap<CollectionIndex, CollectionSearch>()

  /** @param stateDir the state folder (`.git/cms`) the databases go under */
  constructor (stateDir: string) {
    this.#stateDir = stateDir
  }

  /** Makes the search of a new collection index (the content store's `companion` option). */
  readonly companion = (index: CollectionIndex): IndexCompanion => {
    const search = new CollectionSearch(index, this.#stateDir)
    this.#byIndex.set(index, search)
    return search
  }

  /** The search of a collection index; throws when the index was made without one. */
  of (index: CollectionIndex): CollectionSearch {
    const search = this.#byIndex.get(index)
    if (search === undefined) throw new Error(`no search for collection ${index.collection.name}`)
    return search
  }

  /**
   * Searches a collection for one editor.
   * @param index the collection's index
   * @param query a parsed `q`
   * @param drafts the editor's drafts by id
   * @param start the first match of the page
   * @param count the page's size
   * @returns every match's count, and the page's entries in rank order
   */
  async entries (index: CollectionIndex, query: SearchQuery, drafts: ReadonlyMap<string, DraftRecord>, start: number, count: number): Promise<{ total: number, entries: FoundEntry[] }> {
    // Once the changes the index was told of (watcher, directory) reached the search.
    await index.all()
    const search = this.of(index)
    if (query.words.length === 0) { await search.ready(); return { total: 0, entries: [] } }
    const draftHits = matchingDrafts(index, query, drafts)
    const skip = new Set(drafts.keys())
    return await search.use(db => {
      const { total, ids, tiers } = db.search(query, skip, start + count)
      // Merge the two rankings up to the page's end: within a tier, drafts first.
      const ranked: FoundEntry[] = []
      let i = 0
      let j = 0
      while (ranked.length < start + count && (i < ids.length || j < draftHits.length)) {
        const hit = draftHits[j]
        if (hit !== undefined && (i >= ids.length || hit.tier <= (tiers[i] as number))) {
          ranked.push({ id: hit.draft.id, draft: hit.draft })
          j++
        } else {
          ranked.push({ id: ids[i++] as string, draft: null })
        }
      }
      return { total: total + draftHits.length, entries: ranked.slice(start) }
    })
  }

  /**
   * Every match of a collection for one editor, unpaged (for `q` with `sort` or `draft`).
   * @param index the collection's index
   * @param query a parsed `q`
   * @param drafts the editor's drafts by id
   * @returns the base entries without a draft of this editor in rank order, and the drafts that match
   */
  async allEntries (index: CollectionIndex, query: SearchQuery, drafts: ReadonlyMap<string, DraftRecord>): Promise<{ baseIds: string[], drafts: DraftRecord[] }> {
    await index.all()
    const search = this.of(index)
    if (query.words.length === 0) { await search.ready(); return { baseIds: [], drafts: [] } }
    const baseIds = await search.use(db => db.search(query, new Set(drafts.keys()), Infinity).ids)
    return { baseIds, drafts: matchingDrafts(index, query, drafts).map(hit => hit.draft) }
  }
}

/** The editor's drafts that match, with their tier, in rank order (tier, then id). */
function matchingDrafts (index: CollectionIndex, query: SearchQuery, drafts: ReadonlyMap<string, DraftRecord>): Array<{ tier: number, draft: DraftRecord }> {
  const found: Array<{ tier: number, draft: DraftRecord }> = []
  for (const draft of drafts.values()) {
    if (draft.kind === 'delete') continue
    const tier = tierOf(entryText(draft.id, draft.data, index.collection.titleField), query)
    if (tier !== null) found.push({ tier, draft })
  }
  return found.sort((a, b) => a.tier - b.tier || (a.draft.id < b.draft.id ? -1 : 1))
}
