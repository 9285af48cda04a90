/**
 * The persisted index of one collection (issue 18): its rows as they were when the snapshot was
 * written, under `.git/cms/index/<collection>.json`, so a restart reads only the files that changed
 * instead of every file. A snapshot is only a hint: the index stats every file it lists and re-reads
 * any whose signature (size, mtime, inode, ctime) differs, so a snapshot can never serve data its
 * files no longer hold. On any doubt (another format version, another collection definition or
 * repository path, an unreadable or malformed file) it is ignored and the index is built in full.
 * Written atomically (temp file, fsync, rename); deleting it is always safe. The file is JSON lines:
 * a header (format version, key), one row per line, an end line with the row count. A row line
 * leaves out what the row derives: the file when it is the id's default one, the title when it is
 * the title field's value (or the id).
 */
import { createHash, randomBytes } from 'node:crypto'
import { closeSync, fsync as fsyncCallback, openSync, readSync, writeSync } from 'node:fs'
import { StringDecoder } from 'node:string_decoder'
import { mkdir, rename, rm } from 'node:fs/promises'
import { promisify } from 'node:util'
import path from 'node:path'
import { syncDirectory, TEMP_PREFIX } from './atomic-write.js'
import type { Collection } from './collection-registry.js'
import type { EntryData } from '../content/formats.js'
import type { ValidationIssue } from '../errors.js'
import { titlesOf } from '../content/entry-search.js'
import { StoredRow, type IndexRow, type RowHome } from './index-row.js'

/**
 * The snapshot format. Bump it whenever what a row holds or how it is computed changes (the fields
 * of `IndexRow`, `rowContent`, the search text, the signature): older snapshots are then ignored.
 */
export const SNAPSHOT_FORMAT = 5

/** The folder of the snapshots, under `.git/cms`. */
export const SNAPSHOT_DIR = 'index'

/**
 * A file whose ctime is this close to (or after) the moment it was read may have been written again
 * within the same file-system timestamp tick, unseen by its signature ("racily clean", as git calls
 * it): such rows are never persisted, so the next start reads their file again. Local file systems
 * stamp times from the kernel's coarse clock (a tick of 1-10 ms); a second leaves a wide margin.
 */
export const RACY_MS = 1000

/** The first line of a snapshot file (then one line per row, then `{"end":<rows>}`). */
interface SnapshotHeader {
  format: number
  key: string
}

/** A row as a snapshot holds it: without what it derives (see the module's note). */
export interface SnapshotRow {
  id: string
  sig: string
  /** Absolute path; absent when it is the id's default file. */
  file?: string
  fields?: EntryData
  bodyAt?: number
  validationIssues?: ValidationIssue[]
  /** Absent when it is the title field's value, or the id when there is none. */
  title?: string
  order: number | null
}

/** One collection's snapshot file. */
export class IndexSnapshot {
  /** Absolute path of the snapshot file. */
  readonly file: string
  /** Identifies the collection definition and repository path the rows were computed under. */
  readonly key: string
  readonly #titleField: string | null

  /**
   * @param stateDir `.git/cms`
   * @param collection the collection (its definition is part of the key)
   * @param repoRealDir the repository's real path (part of the key: rows hold absolute paths)
   */
  constructor (stateDir: string, collection: Collection, repoRealDir: string) {
    this.file = path.join(stateDir, SNAPSHOT_DIR, `${collection.name}.json`)
    this.key = snapshotKey(collection, repoRealDir)
    this.#titleField = collection.titleField
  }

  /**
   * The title a row derives from its fields (what a snapshot line leaves out).
   * @param row a snapshot row or an index row
   * @returns the title field's value, or the id
   */
  derivedTitle (row: { id: string, fields?: EntryData | undefined }): string {
    return titlesOf(row.fields, this.#titleField)[0] ?? row.id
  }

  /**
   * Reads the snapshot, a chunk at a time: parsing the whole text at once (40 MB at 100,000
   * entries) grew the heap to twice the rows it made, and V8 kept it.
   * @param home where the rows find their default file
   * @returns its rows by id (revision 0: the revision log has the revisions), or null when there is
   * none or it is in doubt
   */
  async read (home: RowHome): Promise<Map<string, StoredRow> | null> {
    let fd: number
    try {
      fd = openSync(this.file, 'r')
    } catch {
      return null
    }
    try {
      return await this.#readLines(fd, home)
    } catch {
      return null
    } finally {
      closeSync(fd)
    }
  }

  /**
   * The rows of an open snapshot file, or null when it is in doubt (throws when unreadable). It
   * yields between chunks, so the folder scan started beside it (its readdir in the thread pool)
   * goes on while the rows are parsed, and requests are served meanwhile.
   */
  async #readLines (fd: number, home: RowHome): Promise<Map<string, StoredRow> | null> {
    const rows = new Map<string, StoredRow>()
    const decoder = new StringDecoder('utf8')
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES)
    let rest = ''
    let header = true
    let end: unknown = null
    for (let chunk = 0; ; chunk++) {
      if (chunk > 0) await new Promise(resolve => setImmediate(resolve))
      const n = readSync(fd, buffer, 0, CHUNK_BYTES, null)
      const text = rest + (n > 0 ? decoder.write(buffer.subarray(0, n)) : decoder.end())
      const cut = text.lastIndexOf('\n')
      // The last line of a complete file is the end line, ended by a newline like every line.
      if (n === 0) return text === '' && isEnd(end, rows.size) ? rows : null
      if (cut < 0) { rest = text; continue }
      rest = text.slice(cut + 1)
      let lines = text.slice(0, cut).split('\n')
      if (header) {
        const head = JSON.parse(lines[0] ?? '') as unknown
        if (!isHeader(head) || head.format !== SNAPSHOT_FORMAT || head.key !== this.key) return null
        header = false
        lines = lines.slice(1)
      }
      if (end !== null && lines.length > 0) return null
      if (lines.length > 0 && lines[lines.length - 1]!.startsWith('{"end"')) end = JSON.parse(lines.pop()!) as unknown
      if (lines.length === 0) continue
      for (const row of JSON.parse(`[${lines.join(',')}]`) as unknown[]) {
        if (!isRow(row) || rows.has(row.id)) return null
        // The index's own row at once: the parsed object dies young (less to promote and collect).
        if (row.fields === undefined || (row.file === undefined && home.defaultFile(row.id) === null)) continue
        const content = { fields: row.fields, bodyAt: row.bodyAt, validationIssues: row.validationIssues, title: row.title ?? this.derivedTitle(row), order: row.order }
        rows.set(row.id, new StoredRow(home, row.id, row.file ?? null, row.sig, 0, content))
      }
    }
  }

  /**
   * Writes the snapshot atomically (temp file, fsync, rename, directory fsync), in chunks: the
   * text of 100,000 rows at once would be tens of megabytes the heap then keeps. One line per row
   * (JSON text holds no raw newline), between a header line and an end line with the row count.
   * @param rows the rows to persist (rows with a read error and racy rows already left out)
   * @returns resolves once the file is durable
   */
  async write (rows: Iterable<StoredRow>): Promise<void> {
    const dir = path.dirname(this.file)
    await mkdir(dir, { recursive: true })
    const tmp = path.join(dir, `${TEMP_PREFIX}${randomBytes(6).toString('hex')}-${path.basename(this.file)}`)
    const fd = openSync(tmp, 'wx', 0o644)
    try {
      let chunk = `${JSON.stringify({ format: SNAPSHOT_FORMAT, key: this.key })}\n`
      let count = 0
      for (const row of rows) {
        // A row whose data JSON cannot carry as it is (NaN, Infinity, -0 from YAML) is left out.
        const text = rowJson(this.#line(row))
        if (text === null) continue
        chunk += `${text}\n`
        count++
        if (chunk.length >= CHUNK_CHARS) {
          writeAllSync(fd, chunk)
          chunk = ''
          // Requests go on between chunks.
          await new Promise(resolve => setImmediate(resolve))
        }
      }
      writeAllSync(fd, `${chunk}${JSON.stringify({ end: count })}\n`)
      await fsync(fd)
    } catch (err) {
      closeSync(fd)
      await rm(tmp, { force: true })
      throw err
    }
    closeSync(fd)
    try {
      await rename(tmp, this.file)
    } catch (err) {
      await rm(tmp, { force: true })
      throw err
    }
    await syncDirectory(dir)
  }

  /** What a snapshot line holds of a row. */
  #line (row: StoredRow): SnapshotRow {
    const line: SnapshotRow = { id: row.id, sig: row.sig, order: row.order }
    if (!row.hasDefaultFile()) line.file = row.file
    if (row.title !== this.derivedTitle(row)) line.title = row.title
    if (row.fields !== undefined) line.fields = row.fields
    if (row.bodyAt !== undefined) line.bodyAt = row.bodyAt
    if (row.validationIssues !== undefined) line.validationIssues = row.validationIssues
    return line
  }
}

const CHUNK_BYTES = 1024 * 1024
const CHUNK_CHARS = 1024 * 1024

function writeAllSync (fd: number, text: string): void {
  const bytes = Buffer.from(text, 'utf8')
  for (let at = 0; at < bytes.byteLength;) at += writeSync(fd, bytes, at, bytes.byteLength - at)
}

/**
 * The ctime (ms) a signature records, or NaN for a signature without one (an older format).
 * @param sig a file signature (`<size>:<mtimeMs>:<ino>:<ctimeMs>`)
 * @returns the ctime in milliseconds
 */
export function signatureCtime (sig: string): number {
  // No split: this runs for every row a restart takes.
  const first = sig.indexOf(':')
  const second = first < 0 ? -1 : sig.indexOf(':', first + 1)
  const third = second < 0 ? -1 : sig.indexOf(':', second + 1)
  if (third < 0 || sig.includes(':', third + 1)) return Number.NaN
  return Number(sig.slice(third + 1))
}

const fsync = promisify(fsyncCallback)

/** Marks a value that JSON would change (never in real data: it holds a NUL). */
const NOT_JSON = '\u0000not-json'
const NOT_JSON_TEXT = JSON.stringify(NOT_JSON).slice(1, -1)

/**
 * A row as JSON text, when JSON carries it exactly.
 * @param row an index row
 * @returns its JSON text, or null when its data holds a number JSON cannot carry (NaN, Infinity, -0)
 */
export function rowJson (row: IndexRow | SnapshotRow): string | null {
  const text = JSON.stringify(row, jsonExact)
  return text.includes(NOT_JSON_TEXT) ? null : text
}

function jsonExact (_key: string, value: unknown): unknown {
  return typeof value === 'number' && (!Number.isFinite(value) || Object.is(value, -0)) ? NOT_JSON : value
}

function snapshotKey (c: Collection, repoRealDir: string): string {
  const definition = [SNAPSHOT_FORMAT, repoRealDir, c.dir, c.format, c.nested, c.indexFile, c.files === null ? null : [...c.files], c.titleField, c.orderField, c.schema]
  return createHash('sha256').update(JSON.stringify(definition)).digest('hex')
}

function isHeader (v: unknown): v is SnapshotHeader {
  if (typeof v !== 'object' || v === null) return false
  const o = v as Record<string, unknown>
  return typeof o.format === 'number' && typeof o.key === 'string'
}

function isEnd (v: unknown, rows: number): boolean {
  return typeof v === 'object' && v !== null && (v as { end?: unknown }).end === rows
}

function isRow (v: unknown): v is SnapshotRow {
  if (typeof v !== 'object' || v === null) return false
  const r = v as Record<string, unknown>
  return typeof r.id === 'string' && (r.file === undefined || typeof r.file === 'string') && typeof r.sig === 'string' &&
    (r.title === undefined || typeof r.title === 'string') && (r.order === null || typeof r.order === 'number') && r.readError === undefined &&
    (r.fields === undefined || (typeof r.fields === 'object' && r.fields !== null && !Array.isArray(r.fields))) &&
    (r.bodyAt === undefined || (typeof r.bodyAt === 'number' && Number.isInteger(r.bodyAt) && r.bodyAt >= 0)) &&
    (r.validationIssues === undefined || Array.isArray(r.validationIssues))
}
