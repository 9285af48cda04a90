/**
 * The full-text search of one collection: a SearchDb that catches up with the collection index at
 * its open and before a search once the index changed. SiteSearch makes one beside each collection
 * index (the content store's `companion`) and answers `q` for one editor: the base entries (those
 * the editor has a draft of left out), and the editor's drafts tiered the same way, first in their tier.
 */
import { setImmediate as nextTurn } from 'node:timers/promises'
import path from 'node:path'
import type { CollectionIndex, IndexRow } from '../storage/collection-index.js'
import type { IndexCompanion } from '../storage/content-store.js'
import type { DraftRecord } from '../storage/draft-store.js'
import { RACY_MS, signatureCtime, signatureSize } from '../storage/file-signature.js'
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
/** Entries read and indexed per transaction, so the event loop turns between chunks: at most 64, of 128 KiB (but one). */
const CHUNK = 64
const CHUNK_BYTES = 128 * 1024

/** Full-text search over one collection. */
export class CollectionSearch {
  readonly #index: CollectionIndex
  readonly #file: string
  #db: SearchDb | null = null
  #opening: Promise<SearchDb> | null = null
  /** The signature each indexed entry had (the database keeps '' for a racy one). */
  #indexed = new Map<string, string>()
  /** The index's revision when the database last caught up with it. */
  #caughtUpAt = -1
  /** The catch-up under way: searches wait for it, one at a time. */
  #catchingUp: Promise<unknown> = Promise.resolve()
  #closed = false
  #builds = 0
  #loadStats = { fromSnapshot: 0, read: 0 }

  /** @param stateDir the state folder (`.git/cms`) the database goes under */
  constructor (index: CollectionIndex, stateDir: string) {
    this.#index = index
    this.#file = path.join(stateDir, SEARCH_DIR, `${index.collection.name}.sqlite`)
  }

  /** Opens the index in the background; never rejects (a failure is reported to the next search). */
  async start (): Promise<void> {
    if (!this.#closed) await this.#open().then(() => {}, () => {})
  }

  /** Waits until the index is open and holds every change of the entry index so far. */
  async ready (): Promise<void> {
    await this.use(() => {})
  }

  /** Times the index was built from every entry, and what the last open of an existing database kept and read again. */
  get stats (): { builds: number, fromSnapshot: number, read: number } {
    return { builds: this.#builds, ...this.#loadStats }
  }

  /**
   * Runs a search over the index once open and caught up with the entry index. A damaged
   * database is removed and built again, and the search runs again on that.
   */
  async use<T> (search: (db: SearchDb) => T): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const db = await this.#open()
      if (this.#db !== db) throw new Error('The full-text index is closed')
      try {
        const catchingUp = this.#catchingUp.catch(() => {}).then(async () => await this.#catchUp(db))
        this.#catchingUp = catchingUp
        await catchingUp
        if (this.#db !== db) throw new Error('The full-text index is closed')
        return search(db)
      } catch (err) {
        // Retried once on a database built again: damaged, or dropped by a failed catch-up.
        if (attempt > 0 || !(isDamaged(err) || this.#db !== db)) throw err
        this.#discard(db)
      }
    }
  }

  /** Closes the database once a catch-up under way has stopped (on shutdown); never rejects. */
  async flush (): Promise<void> {
    this.#closed = true
    await this.#opening?.catch(() => {})
    await this.#catchingUp.catch(() => {})
    const db = this.#db
    this.#db = null
    db?.close()
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
    const { format, titleField } = this.#index.collection
    // Opening a database is a few ms of synchronous work: in a turn of its own.
    await nextTurn()
    if (this.#closed) throw new Error('The full-text index closed while it opened')
    const db = SearchDb.open(this.#file, JSON.stringify({ format, titleField }))
    try {
      this.#indexed = db.signatures()
      this.#caughtUpAt = -1
      const { rows, read } = await this.#catchUp(db)
      if (db.created) this.#builds++
      else this.#loadStats = { fromSnapshot: rows - read, read }
      this.#db = db
      return db
    } catch (err) {
      db.close()
      throw err
    }
  }

  /** Indexes again the entries whose signature changed, removes those gone (unless at the revision caught up with). */
  async #catchUp (db: SearchDb): Promise<{ rows: number, read: number }> {
    const index = this.#index
    const rows = await index.all()
    const revision = index.revision
    if (revision === this.#caughtUpAt) return { rows: rows.length, read: 0 }
    const indexed = this.#indexed
    const toRead: IndexRow[] = []
    let known = 0
    for (const row of rows) {
      const sig = indexed.get(row.id)
      if (sig !== undefined) known++
      if (sig !== row.sig) toRead.push(row)
    }
    try {
      if (known < indexed.size) {
        const ids = new Set(rows.map(row => row.id))
        const gone = [...indexed.keys()].filter(id => !ids.has(id))
        db.transaction(() => { for (const id of gone) db.remove(id) })
        for (const id of gone) indexed.delete(id)
      }
      const titleField = index.collection.titleField
      for (let i = 0, end = 0; i < toRead.length; i = end) {
        // A turn between chunks: a build of 100,000 entries held every request 30 s, 64 entries of 16,000 strings 1.9 s.
        if (i > 0) await nextTurn()
        if (this.#closed) throw new Error('The full-text index closed while it opened')
        for (let bytes = 0; end < toRead.length && end - i < CHUNK && (end === i || bytes < CHUNK_BYTES); end++) bytes += signatureSize(toRead[end]!.sig) || 0
        const chunk = toRead.slice(i, end)
        // As the index holds them: a re-check here could read an outside writer's file half-way.
        const entries = await index.freshen(chunk, false)
        const now = Date.now()
        db.transaction(() => {
          const found = new Set<string>()
          for (const entry of entries) {
            found.add(entry.id)
            indexed.set(entry.id, entry.sig)
            // A file changed that close to now may change again unseen: its signature is not kept.
            db.put(entry.id, entryText(entry.id, entry.data, titleField), signatureCtime(entry.sig) < now - RACY_MS ? entry.sig : '')
          }
          // Removed meanwhile.
          for (const row of chunk) if (!found.has(row.id)) { db.remove(row.id); indexed.delete(row.id) }
        })
      }
    } catch (err) {
      if (!this.#closed) this.#discard(db)
      throw err
    }
    this.#caughtUpAt = revision
    return { rows: rows.length, read: toRead.length }
  }

  /** Drops a damaged database: the next use builds it again from every entry. */
  #discard (db: SearchDb): void {
    if (this.#db !== db) return
    try { db.close() } catch {}
    SearchDb.remove(this.#file)
    this.#db = null
    this.#opening = null
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
   * @param count the page's size (Infinity: every match)
   * @returns every match's count, and the page's entries in rank order
   */
  async entries (index: CollectionIndex, query: SearchQuery, drafts: ReadonlyMap<string, DraftRecord>, start: number, count: number): Promise<{ total: number, entries: FoundEntry[] }> {
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
