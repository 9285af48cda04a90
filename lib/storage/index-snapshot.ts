/**
 * The persisted index of one collection (issue 18): its rows as they were when the snapshot was
 * written, under `.git/cms/index/<collection>.rows`, so a restart reads only the files that changed
 * instead of every file. A snapshot is only a hint: the index stats every file it lists and re-reads
 * any whose signature (size, mtime, inode, ctime) differs, so a snapshot can never serve data its
 * files no longer hold. On any doubt (another format version, another collection definition or
 * repository path, a wrong length or checksum, an unreadable file) it is ignored and the index is
 * built in full. Written atomically (temp file, fsync, rename); deleting it is always safe. The
 * layout is a row table (`row-table.ts`): read as one buffer and indexed without parsing a row, the
 * rows' content parsed when first used; rows are written in list order, so the first list's sort
 * finds them sorted. A row whose content was never parsed is written again by copying its bytes.
 */
import { createHash } from 'node:crypto'
import { PASS_RACY_MS, signatureCtime } from './stat-one.js'

/** The ctime a signature records (see `stat-one.ts`). */
export { signatureCtime }
import { closeSync, open as openCallback, readFile as readFileCallback, writeSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { promisify } from 'node:util'
import path from 'node:path'
import { writeFileInStepsAtomic } from './atomic-write.js'
import type { Collection } from './collection-registry.js'
import type { StoredRow } from './index-row.js'
import { RowTable, RowTableWriter } from './row-table.js'

/**
 * The snapshot format. Bump it whenever what a row holds or how it is computed changes (the fields
 * of `IndexRow`, `rowContent`, the search text, the signature): older snapshots are then ignored.
 */
export const SNAPSHOT_FORMAT = 7

/** The folder of the snapshots, under `.git/cms`. */
export const SNAPSHOT_DIR = 'index'

/**
 * A file whose ctime is this close to (or after) the moment it was read may have been written again
 * within the same file-system timestamp tick, unseen by its signature ("racily clean", as git calls
 * it): such rows are never persisted, so the next start reads their file again. Local file systems
 * stamp times from the kernel's coarse clock (a tick of 1-10 ms); a second leaves a wide margin.
 * (Defined in `stat-one.ts`, which the stat worker loads, as it tells racy files too.)
 */
export const RACY_MS = PASS_RACY_MS

/** One collection's snapshot file. */
export class IndexSnapshot {
  /** Absolute path of the snapshot file. */
  readonly file: string
  /** Identifies the collection definition and repository path the rows were computed under. */
  readonly key: string
  readonly #titleField: string | null
  /** The file of the JSON-lines format before this one (removed when a snapshot is written). */
  readonly #legacyFile: string

  /**
   * @param stateDir `.git/cms`
   * @param collection the collection (its definition is part of the key)
   * @param repoRealDir the repository's real path (part of the key: rows hold absolute paths)
   */
  constructor (stateDir: string, collection: Collection, repoRealDir: string) {
    this.file = path.join(stateDir, SNAPSHOT_DIR, `${collection.name}.rows`)
    this.#legacyFile = path.join(stateDir, SNAPSHOT_DIR, `${collection.name}.json`)
    this.key = snapshotKey(collection, repoRealDir)
    this.#titleField = collection.titleField
  }

  /**
   * Reads the snapshot: one read of the file (in the thread pool), then its records indexed
   * without parsing any row. Call `release` on the table once the rows are taken.
   * @returns its rows' table, or null when there is none or it is in doubt
   */
  async read (): Promise<RowTable | null> {
    let fd: number
    try {
      fd = await openFile(this.file, 'r')
    } catch {
      return null
    }
    let buf: Buffer
    try {
      buf = await readWhole(fd)
    } catch {
      closeSync(fd)
      return null
    }
    // The table keeps the file open: once the rows are taken, a large one reads records from it.
    return RowTable.parse(buf, SNAPSHOT_FORMAT, this.key, this.#titleField, fd)
  }

  /**
   * Writes the snapshot atomically (temp file, fsync, rename, directory fsync), in chunks, with
   * requests served between them.
   * @param rows the rows to persist, in list order (rows with a read error and racy rows already
   * left out)
   * @param carried the revision states the rows carry (see `CarriedStates`), or null; a row the
   * table cannot hold is added to its states
   * @param folder the collection folder's signature when the rows are exactly its entry files
   *   (`snapshotFolder`), or null; written only when every row becomes a record
   * @returns resolves once the file is durable
   */
  async write (rows: Iterable<StoredRow>, carried: CarriedStates | null = null, folder: string | null = null): Promise<void> {
    await writeFileInStepsAtomic(this.file, async fd => {
      let flushed = 0
      // The folder's signature is written only when every row became a record (see `snapshotFolder`).
      let everyRow = true
      const writer = new RowTableWriter(SNAPSHOT_FORMAT, this.key, this.#titleField, bytes => { writeAllSync(fd, bytes); flushed++ })
      for (const row of rows) {
        // A row never parsed is the record it came from: its bytes are copied (with its revision now).
        const lazy = row.lazySource()
        if (lazy !== null && lazy.source instanceof RowTable) writer.copy(lazy.source, lazy.at, row.revision)
        else {
          const fields = row.fields
          const content = fields === undefined ? null : { fields, bodyAt: row.bodyAt, validationIssues: row.validationIssues, title: row.title, order: row.order }
          // A row whose data JSON cannot carry as it is (NaN, Infinity, -0 from YAML) is left out.
          const added = writer.add({ id: row.id, rev: row.revision, sig: row.sig, order: row.order, file: row.hasDefaultFile() ? null : row.file, content })
          if (!added) everyRow = false
          if (!added && carried !== null) {
            carried.ids.push(row.id)
            carried.revs.push(row.revision)
            carried.sigs.push(row.sig)
          }
        }
        if (flushed > 0) {
          flushed = 0
          // Requests go on between chunks.
          await new Promise(resolve => setImmediate(resolve))
        }
      }
      const withFolder = folder !== null && everyRow
      writer.end(carried === null ? (withFolder ? JSON.stringify({ folder }) : '') : JSON.stringify(withFolder ? { ...carried, folder } : carried))
    })
    await rm(this.#legacyFile, { force: true })
  }
}

/**
 * The revision states a snapshot carries so that a restart need not parse the revision log (issue
 * 18, seventh pass): every record holds its row's revision, and these are the states of the
 * entries without a record (deleted ones, unreadable or racy rows, rows a record cannot hold), all
 * as they were when the log's bytes hashed to `log`. A restart whose log still has those bytes
 * (same length and SHA-256) takes the states from the snapshot; any other log is parsed as before.
 */
export interface CarriedStates {
  /** SHA-256 (hex) of the revision log's bytes when the rows were taken. */
  log: string
  /** The log's length then. */
  bytes: number
  ids: string[]
  revs: number[]
  sigs: Array<string | null>
}

/**
 * The signature of a collection folder (`folderSignature`) a snapshot records when its records are
 * exactly the folder's entry files (issue 18, ninth pass): a flat folder whose listing, taken
 * between two stats of the folder with this very signature at least RACY_MS after its last change,
 * named the records' files and nothing else (no problem name, no file other than its id's default
 * one). Any entry added, removed or renamed since changes the folder's mtime and ctime (a ctime no
 * `touch` can set back), so a restart that finds this signature again needs no listing of the
 * folder: the records are its files, each then stat-ed and compared as always.
 * @param table a snapshot's table
 * @returns the signature, or null when the snapshot records none
 */
export function snapshotFolder (table: RowTable): string | null {
  if (table.carried === '') return null
  try {
    const folder: unknown = (JSON.parse(table.carried) as { folder?: unknown }).folder
    return typeof folder === 'string' && folder !== '' ? folder : null
  } catch {
    return null
  }
}

/**
 * A folder's signature: mtime, ctime and inode (an entry added, removed or renamed changes the
 * first two; a folder put in its place, the inode).
 * @param st the folder's stats
 * @returns the signature
 */
export function folderSignature (st: { mtimeMs: number, ctimeMs: number, ino: number }): string {
  return `${st.mtimeMs}:${st.ctimeMs}:${st.ino}`
}

/**
 * The carried states of a table, when it has well-formed ones.
 * @param table a snapshot's table
 * @returns the states, or null
 */
export function carriedStates (table: RowTable): CarriedStates | null {
  if (table.carried === '') return null
  let c: Partial<CarriedStates>
  try { c = JSON.parse(table.carried) as Partial<CarriedStates> } catch { return null }
  if (typeof c !== 'object' || c === null || typeof c.log !== 'string' || typeof c.bytes !== 'number' || !Array.isArray(c.ids) || !Array.isArray(c.revs) || !Array.isArray(c.sigs)) return null
  if (c.revs.length !== c.ids.length || c.sigs.length !== c.ids.length) return null
  for (let i = 0; i < c.ids.length; i++) {
    const sig: unknown = c.sigs[i]
    if (typeof c.ids[i] !== 'string' || typeof c.revs[i] !== 'number' || !(typeof sig === 'string' || sig === null)) return null
  }
  return c as CarriedStates
}

/**
 * The digest a snapshot records of a revision log's bytes.
 * @param bytes the log file's bytes
 * @returns SHA-256, hex
 */
export function logDigest (bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex')
}

function writeAllSync (fd: number, bytes: Buffer): void {
  for (let at = 0; at < bytes.byteLength;) at += writeSync(fd, bytes, at, bytes.byteLength - at)
}


const openFile = promisify(openCallback)
const readWhole = promisify(readFileCallback) as (fd: number) => Promise<Buffer>

function snapshotKey (c: Collection, repoRealDir: string): string {
  const definition = [SNAPSHOT_FORMAT, repoRealDir, c.dir, c.format, c.nested, c.indexFile, c.files === null ? null : [...c.files], c.titleField, c.orderField, c.schema]
  return createHash('sha256').update(JSON.stringify(definition)).digest('hex')
}
