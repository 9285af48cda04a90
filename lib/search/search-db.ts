/**
 * One collection's full-text index: SQLite FTS5 in `.git/cms/fts/<collection>.sqlite`, a cache of
 * the entry files rebuilt from them at any doubt. `entries` maps ids to FTS rowids and file
 * signatures; `text` is contentless, with 2- and 3-character prefix indexes (a two-letter prefix
 * at 100,000 entries: 0.8 s without them, ~25 ms with).
 */
import Database from 'better-sqlite3'
import { mkdirSync, rmSync, statSync } from 'node:fs'
import path from 'node:path'
import type { EntryText } from './entry-text.js'
import type { SearchQuery } from './tokenize.js'

/** Bump when what is indexed of an entry changes: older databases are then rebuilt. */
const FORMAT_VERSION = 1

/** A tier with more matches is ordered by rowid, not BM25: FTS5 scores every match before sorting. */
const RANK_MAX = 2000

/** BM25 over the body only: over the whole row, a short title would rank above a longer one with the same words. */
const BM25 = 'bm25(text, 0, 0, 1)'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (doc INTEGER PRIMARY KEY, id TEXT UNIQUE NOT NULL, sig TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS text USING fts5(title, fields, body, content='', contentless_delete=1,
  tokenize='unicode61 remove_diacritics 0', prefix='2 3');`

/** Whether an error says the database file is damaged or is no database (then it is rebuilt). */
export function isDamaged (err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && (code.startsWith('SQLITE_CORRUPT') || code.startsWith('SQLITE_NOTADB'))
}

/** The FTS5 expression of a query's words: each word quoted (terms are letters and digits only), ANDed. */
function matchOf (query: SearchQuery): string {
  return query.words.map((word, i) => `"${word}"${query.prefixLast && i === query.words.length - 1 ? '*' : ''}`).join(' AND ')
}

/** The statements of a database. */
function prepareStatements (db: Database.Database) {
  return {
    put: db.prepare<[string, string]>('INSERT INTO entries (id, sig) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET sig = excluded.sig RETURNING doc').pluck(),
    docOf: db.prepare<[string]>('SELECT doc FROM entries WHERE id = ?').pluck(),
    idOf: db.prepare<[number]>('SELECT id FROM entries WHERE doc = ?').pluck(),
    removeEntry: db.prepare<[number]>('DELETE FROM entries WHERE doc = ?'),
    removeText: db.prepare<[number]>('DELETE FROM text WHERE rowid = ?'),
    insertText: db.prepare<[number, string, string, string]>('INSERT INTO text (rowid, title, fields, body) VALUES (?, ?, ?, ?)'),
    count: db.prepare<[string]>('SELECT count(*) AS n FROM text WHERE text MATCH ?'),
    matchesDoc: db.prepare<[string, number]>('SELECT 1 FROM text WHERE text MATCH ? AND rowid = ?'),
    ranked: db.prepare<[string, number]>(`SELECT rowid FROM text WHERE text MATCH ? ORDER BY ${BM25}, rowid LIMIT ?`).pluck(),
    unranked: db.prepare<[string, number]>('SELECT rowid FROM text WHERE text MATCH ? ORDER BY rowid LIMIT ?').pluck()
  }
}

/** A collection's full-text database. */
export class SearchDb {
  readonly #db: Database.Database
  readonly #sql: ReturnType<typeof prepareStatements>
  /** Whether it was created empty by `open` (every entry must be indexed). */
  readonly created: boolean

  private constructor (db: Database.Database, created: boolean) {
    this.#db = db
    this.created = created
    this.#sql = prepareStatements(db)
  }

  /** Opens the database of a file, or creates it afresh when it is missing, of another key, or unreadable. */
  static open (file: string, key: string): SearchDb {
    const fullKey = JSON.stringify({ version: FORMAT_VERSION, key })
    const existing = SearchDb.#openExisting(file, fullKey)
    if (existing !== null) return existing
    SearchDb.remove(file)
    mkdirSync(path.dirname(file), { recursive: true })
    const db = SearchDb.#configure(new Database(file), true)
    db.#db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)').run('key', fullKey)
    return db
  }

  /** The database of the file when it holds one built under this key, else null. */
  static #openExisting (file: string, fullKey: string): SearchDb | null {
    let db: Database.Database
    try { db = new Database(file, { fileMustExist: true }) } catch { return null }
    try {
      const pages = db.pragma('page_count', { simple: true }) as number
      const pageSize = db.pragma('page_size', { simple: true }) as number
      // A file cut short (with no WAL to hold its last pages): SQLite would find out only when it reads them.
      const whole = statSync(file).size >= pages * pageSize || (statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0) > 0
      if (whole && db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get('key') === fullKey) return SearchDb.#configure(db, false)
    } catch {
      // Not a database, damaged, or no meta table: built again.
    }
    db.close()
    return null
  }

  static #configure (db: Database.Database, created: boolean): SearchDb {
    // A cache of the files: no fsync, which held the event loop for seconds on a busy disk.
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = OFF')
    db.exec(SCHEMA)
    return new SearchDb(db, created)
  }

  /** Removes a database file and its WAL files. */
  static remove (file: string): void {
    for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
  }

  /** Every stored entry's signature. */
  signatures (): Map<string, string> {
    const sigs = new Map<string, string>()
    for (const [id, sig] of this.#db.prepare('SELECT id, sig FROM entries').raw().iterate() as Iterable<[string, string]>) sigs.set(id, sig)
    return sigs
  }

  /** Runs changes in one transaction. */
  transaction (change: () => void): void {
    this.#db.transaction(change)()
  }

  /** Indexes an entry's text (replacing what it had). */
  put (id: string, text: EntryText, sig: string): void {
    const doc = this.#sql.docOf.get(id) as number | undefined
    if (doc !== undefined) this.#sql.removeText.run(doc)
    const stored = this.#sql.put.get(id, sig) as number
    this.#sql.insertText.run(stored, text.title, text.fields, text.body)
  }

  /** Removes an entry. */
  remove (id: string): void {
    const doc = this.#sql.docOf.get(id) as number | undefined
    if (doc === undefined) return
    this.#sql.removeText.run(doc)
    this.#sql.removeEntry.run(doc)
  }

  /**
   * The stored entries matching a query, by tier, then body BM25 (tiers of at most RANK_MAX), then
   * rowid: the count of all matches, and the first `limit` ids with their tiers.
   */
  search (query: SearchQuery, skip: ReadonlySet<string>, limit: number): { total: number, ids: string[], tiers: number[] } {
    const match = matchOf(query)
    // Cumulative tiers: every word in the title column, in the title or fields columns, anywhere.
    const tiers = [`title : (${match})`, `{title fields} : (${match})`, match]
    const counts: Array<number | undefined> = [undefined, undefined, undefined]
    const countOf = (tier: number): number => (counts[tier] ??= (this.#sql.count.get(tiers[tier] as string) as { n: number }).n)
    const skipped = [0, 0, 0]
    const skipDocs = new Set<number>()
    for (const id of skip) {
      const doc = this.#sql.docOf.get(id) as number | undefined
      if (doc === undefined) continue
      skipDocs.add(doc)
      const tier = tiers.findIndex(match => this.#sql.matchesDoc.get(match, doc) !== undefined)
      if (tier >= 0) skipped[tier] = (skipped[tier] ?? 0) + 1
    }
    const exclusive = [tiers[0], `(${tiers[1]}) NOT (${tiers[0]})`, `(${tiers[2]}) NOT (${tiers[1]})`]
    const ids: string[] = []
    const idTiers: number[] = []
    let before = 0
    for (let tier = 0; tier < 3 && ids.length < limit; tier++) {
      const size = countOf(tier) - before
      before = countOf(tier)
      if (size === 0) continue
      const want = limit - ids.length + (skipped[tier] as number)
      const found = (size <= RANK_MAX ? this.#sql.ranked : this.#sql.unranked).all(exclusive[tier] as string, Number.isFinite(want) ? want : -1) as number[]
      for (const doc of found) {
        if (skipDocs.has(doc) || ids.length >= limit) continue
        ids.push(this.#sql.idOf.get(doc) as string)
        idTiers.push(tier)
      }
    }
    return { total: countOf(2) - (skipped[0] as number) - (skipped[1] as number) - (skipped[2] as number), ids, tiers: idTiers }
  }

  /** Closes the database (its WAL checkpointed). */
  close (): void {
    this.#db.close()
  }
}
