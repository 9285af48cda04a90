/**
 * Where the entry index persists between runs: `.git/cms/index.sqlite`, one row per entry ever seen
 * (a deleted one keeps its revision for a re-created entry). The files stay the truth: a row whose
 * signature differs from its file's is read again; deleting the database costs a full read.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import path from 'node:path'
import Database from 'better-sqlite3'
import type { Collection } from './collection-registry.js'

/** One entry as persisted. */
export interface StoredEntry {
  id: string
  rev: number
  /** The file's signature at that revision; null when the entry is deleted. */
  sig: string | null
  /** The entry's file; null when deleted. */
  file: string | null
  /** The indexed content (`{ message }` when unreadable) as JSON; null when it must be read again. */
  content: string | null
  /** When the content was taken from the file (ms): a file changed that close to it may be racy. */
  checkedAt: number
}

/** Rows read per query when a collection is loaded. */
const LOAD_PAGE = 1000

/** The entry store of one repository (opened once per service instance). */
export class IndexStore {
  readonly #db: Database.Database
  readonly #put: Database.Statement
  readonly #page: Database.Statement
  readonly #keyOf: Database.Statement
  readonly #setKey: Database.Statement

  /**
   * Opens (or creates) the store, taking in the state of earlier versions once.
   * @param stateDir `.git/cms`
   */
  constructor (stateDir: string) {
    mkdirSync(stateDir, { recursive: true })
    const file = path.join(stateDir, 'index.sqlite')
    try {
      this.#db = openDatabase(file)
    } catch {
      // A damaged file: the files are the truth, so it is built again from them.
      for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true })
      this.#db = openDatabase(file)
    }
    this.#db.exec(`
      CREATE TABLE IF NOT EXISTS entries (collection TEXT NOT NULL, id TEXT NOT NULL, rev INTEGER NOT NULL,
        sig TEXT, file TEXT, content TEXT, checked_at INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (collection, id)) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS collections (name TEXT PRIMARY KEY, definition TEXT NOT NULL);`)
    this.#put = this.#db.prepare(`INSERT INTO entries (collection, id, rev, sig, file, content, checked_at)
      VALUES (@collection, @id, @rev, @sig, @file, @content, @checkedAt)
      ON CONFLICT (collection, id) DO UPDATE SET rev = excluded.rev, sig = excluded.sig, file = excluded.file,
        content = excluded.content, checked_at = excluded.checked_at`)
    this.#page = this.#db.prepare(`SELECT id, rev, sig, file, content, checked_at AS checkedAt FROM entries
      WHERE collection = ? AND id > ? ORDER BY id LIMIT ${LOAD_PAGE}`)
    this.#keyOf = this.#db.prepare('SELECT definition FROM collections WHERE name = ?').pluck()
    this.#setKey = this.#db.prepare('INSERT OR REPLACE INTO collections (name, definition) VALUES (?, ?)')
    this.#migrate(stateDir)
  }

  /**
   * Every entry persisted for a collection, a page at a time in id order, a turn of the event loop
   * between pages.
   * @param collection collection name
   * @param definition the collection's `definitionKey` now: when it differs from the persisted
   *   one, the contents are dropped (titles and orders depend on it) and revisions kept
   * @returns the pages of entries
   */
  async * pages (collection: string, definition: string): AsyncGenerator<StoredEntry[]> {
    const same = this.#keyOf.get(collection) === definition
    let after = ''
    for (;;) {
      const page = this.#page.all(collection, after) as StoredEntry[]
      if (!same) for (const e of page) e.content = null
      yield page
      if (page.length < LOAD_PAGE) break
      after = page[page.length - 1]!.id
      await new Promise(resolve => setImmediate(resolve))
    }
    if (!same) this.#setKey.run(collection, definition)
  }

  /**
   * Persists entries (one transaction).
   * @param collection collection name
   * @param entries the entries' new state
   */
  put (collection: string, entries: readonly StoredEntry[]): void {
    if (entries.length === 0) return
    this.#db.transaction(() => {
      for (const e of entries) this.#put.run({ collection, ...e })
    })()
  }

  /** Closes the database. */
  close (): void {
    if (this.#db.open) this.#db.close()
  }

  /** Takes in what earlier versions kept (each step safe to repeat after a crash). */
  #migrate (stateDir: string): void {
    // The binary row table and the search segments of earlier versions.
    for (const dir of ['index', 'search']) rmSync(path.join(stateDir, dir), { recursive: true, force: true })
    this.#migrateRevisionLogs(path.join(stateDir, 'revisions'))
    // Unlinking the hard links of `spares/` changes the files' ctime: stored signatures drop theirs first.
    const spares = path.join(stateDir, 'spares')
    if (existsSync(spares)) {
      this.#db.transaction(() => {
        const rows = this.#db.prepare('SELECT collection, id, sig FROM entries WHERE sig IS NOT NULL').all() as Array<{ collection: string, id: string, sig: string }>
        const update = this.#db.prepare('UPDATE entries SET sig = ? WHERE collection = ? AND id = ?')
        for (const row of rows) {
          const parts = row.sig.split(':')
          if (parts.length === 4) update.run(parts.slice(0, 3).join(':'), row.collection, row.id)
        }
      })()
      rmSync(spares, { recursive: true, force: true })
    }
  }

  /** Takes in `revisions/*.jsonl` so that no revision goes back. */
  #migrateRevisionLogs (logs: string): void {
    let files: string[]
    try { files = readdirSync(logs).filter(f => f.endsWith('.jsonl')) } catch { return }
    const take = this.#db.prepare(`INSERT INTO entries (collection, id, rev, sig, file, content) VALUES (?, ?, ?, ?, NULL, NULL)
      ON CONFLICT (collection, id) DO UPDATE SET rev = max(rev, excluded.rev)`)
    this.#db.transaction(() => {
      for (const file of files) {
        const collection = file.slice(0, -'.jsonl'.length)
        for (const [id, { rev, sig }] of readRevisionLog(readFileSync(path.join(logs, file), 'utf8'))) take.run(collection, id, rev, sig)
      }
    })()
    rmSync(logs, { recursive: true, force: true })
  }
}

/** Opens the database in WAL mode; throws on a damaged file. */
function openDatabase (file: string): Database.Database {
  const db = new Database(file)
  try {
    db.pragma('journal_mode = WAL')
    // A power loss may lose the last rows, which the next start reads again from the files.
    db.pragma('synchronous = NORMAL')
    db.prepare('SELECT count(*) FROM sqlite_master').get()
    return db
  } catch (err) {
    db.close()
    throw err
  }
}

/** The last state of each id in a revision log: `{"id","rev","sig"}` lines after an optional checkpoint. */
function readRevisionLog (text: string): Map<string, { rev: number, sig: string | null }> {
  const states = new Map<string, { rev: number, sig: string | null }>()
  for (const line of text.split('\n')) {
    if (line === '') continue
    let parsed: { checkpoint?: number, ids?: string[] | string, revs?: number[], sigs?: Array<string | null> | string, id?: string, rev?: number, sig?: string | null }
    try { parsed = JSON.parse(line) } catch { continue }
    if (parsed.checkpoint !== undefined) {
      const ids = typeof parsed.ids === 'string' ? parsed.ids.split('\n') : parsed.ids ?? []
      const sigs = typeof parsed.sigs === 'string' ? parsed.sigs.split('\n').map(s => s === '' ? null : s) : parsed.sigs ?? []
      ids.forEach((id, i) => { const rev = parsed.revs?.[i]; if (typeof rev === 'number') states.set(id, { rev, sig: sigs[i] ?? null }) })
    } else if (typeof parsed.id === 'string' && typeof parsed.rev === 'number') {
      states.set(parsed.id, { rev: parsed.rev, sig: parsed.sig ?? null })
    }
  }
  return states
}

/**
 * What a collection's persisted contents depend on (format, title and order fields, schema,
 * folder layout): another key means they are computed again from the files.
 * @param collection the collection
 * @returns a short hash
 */
export function definitionKey (collection: Collection): string {
  const { format, titleField, orderField, schema, dir, nested, indexFile, files } = collection
  const def = JSON.stringify({ v: 1, format, titleField, orderField, schema, dir, nested, indexFile, files: files === null ? null : [...files] })
  return createHash('sha256').update(def).digest('base64url').slice(0, 22)
}
