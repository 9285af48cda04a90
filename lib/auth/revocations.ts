/**
 * Sessions ended by logout: each revoked editorId is remembered until its cookie would have
 * expired anyway, so a replayed cookie stays refused across restarts. The store is an append-only
 * log, `.git/cms/revoked-sessions.jsonl`, one `{"id","exp"}` line per logout (appended and
 * fsynced: a logout costs one short write, however many sessions are revoked). It is compacted
 * (rewritten atomically with only the live revocations) when it has grown well past the live set
 * (twice the live set plus 256 lines), and at load when it holds any dead line. A torn last line (a crash in the middle of an append) is dropped at load; damage
 * anywhere else stops the start. The former `revoked-sessions.json` (one JSON object) is read and
 * migrated into the log at load.
 */
import fs from 'node:fs'
import { mkdir, readFile, readdir, rm } from 'node:fs/promises'
import { promisify } from 'node:util'
import path from 'node:path'
import { writeFileAtomic, syncDirectory, TEMP_PREFIX } from '../storage/atomic-write.js'
import { StartupError } from '../errors.js'
import { isSafeIdentityId } from './identity.js'

// Descriptor calls through the callback API (see storage/atomic-write.ts for why).
const openFd = promisify(fs.open)
const writeFd = promisify(fs.writeFile) as (fd: number, text: string) => Promise<void>
const fsync = promisify(fs.fsync)
const close = promisify(fs.close)

/** The log's file name under the state directory. */
export const REVOCATIONS_FILE = 'revoked-sessions.jsonl'
/** The file of earlier versions (one JSON object), migrated into the log at load. */
export const LEGACY_REVOCATIONS_FILE = 'revoked-sessions.json'
/** Compact once the log holds this many times the live revocations (plus COMPACT_SLACK lines). */
const COMPACT_FACTOR = 2
const COMPACT_SLACK = 256

/** Revoked session ids with their expiry; one instance per service. */
export class RevokedSessions {
  readonly file: string
  /** editorId -> exp (milliseconds since epoch). */
  private readonly revoked: Map<string, number>
  /** Lines in the log file now. */
  private lines: number
  /** Writes run one after another, so a compaction never races an append. */
  private writing: Promise<void> = Promise.resolve()

  private constructor (file: string, revoked: Map<string, number>, lines: number) {
    this.file = file
    this.revoked = revoked
    this.lines = lines
  }

  /**
   * Loads the revocations of a state directory (none when there is no file), migrating the former
   * JSON file and compacting the log when that pays. An unreadable file stops the start: ignoring
   * it would re-admit logged-out sessions.
   * @param stateDir the `.git/cms` directory
   * @param now current time in milliseconds (expired ids are dropped)
   * @returns the loaded set
   */
  static async load (stateDir: string, now: number = Date.now()): Promise<RevokedSessions> {
    const file = path.join(stateDir, REVOCATIONS_FILE)
    const legacyFile = path.join(stateDir, LEGACY_REVOCATIONS_FILE)
    await removeTempFiles(stateDir)
    const revoked = new Map<string, number>()
    const remember = (id: string, exp: number): void => { if (exp > now) revoked.set(id, Math.max(exp, revoked.get(id) ?? 0)) }
    const legacy = await readOptional(legacyFile)
    if (legacy !== null) {
      try {
        const data = JSON.parse(legacy) as unknown
        if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new Error('not an object')
        for (const [id, exp] of Object.entries(data as Record<string, unknown>)) {
          if (!isSafeIdentityId(id) || typeof exp !== 'number') throw new Error(`bad record for ${JSON.stringify(id.slice(0, 70))}`)
          remember(id, exp)
        }
      } catch (err) {
        throw damaged(legacyFile, err)
      }
    }
    const text = await readOptional(file)
    let lines = 0
    let torn = false
    if (text !== null && text !== '') {
      const all = text.split('\n')
      // The text after the last newline is a torn append when it is not empty.
      const tail = all.pop() ?? ''
      torn = tail !== ''
      for (const [i, line] of all.entries()) {
        try {
          const record = JSON.parse(line) as { id?: unknown, exp?: unknown }
          if (typeof record.id !== 'string' || !isSafeIdentityId(record.id) || typeof record.exp !== 'number') throw new Error('not an {id, exp} record')
          remember(record.id, record.exp)
        } catch (err) {
          throw damaged(file, new Error(`line ${i + 1}: ${(err as Error).message}`))
        }
      }
      lines = all.length
    }
    const store = new RevokedSessions(file, revoked, lines)
    // A torn line must go before anything is appended after it; the old file goes once migrated.
    if (torn || legacy !== null || lines > revoked.size) await store.compact(now)
    if (legacy !== null) await rm(legacyFile, { force: true })
    return store
  }

  /**
   * Whether a session id was revoked.
   * @param editorId the session's editor id
   * @param now current time in milliseconds
   * @returns true when revoked and not yet expired
   */
  has (editorId: string, now: number = Date.now()): boolean {
    const exp = this.revoked.get(editorId)
    return exp !== undefined && exp > now
  }

  /**
   * Revokes a session until its expiry and appends it to the log. The id is refused in memory at
   * once, before the write completes.
   * @param editorId the session's editor id
   * @param exp the session's expiry in milliseconds
   * @param now current time in milliseconds
   * @returns resolves once the line is durable
   */
  async revoke (editorId: string, exp: number, now: number = Date.now()): Promise<void> {
    if (exp <= now) return
    this.revoked.set(editorId, Math.max(exp, this.revoked.get(editorId) ?? 0))
    for (const [id, e] of this.revoked) if (e <= now) this.revoked.delete(id)
    const line = JSON.stringify({ id: editorId, exp }) + '\n'
    const write = this.writing.then(async () => {
      await appendDurably(this.file, line)
      // The first line created the file: its directory entry must be durable too.
      if (this.lines++ === 0) await syncDirectory(path.dirname(this.file))
      if (this.worthCompacting()) await this.compact(now)
    })
    // A failed write must not block later ones; the caller still sees its own failure.
    this.writing = write.catch(() => {})
    await write
  }

  /**
   * Waits for pending writes.
   * @returns resolves when the file is up to date
   */
  async flush (): Promise<void> {
    await this.writing
  }

  /**
   * Number of remembered ids (for tests).
   * @returns the count
   */
  get size (): number {
    return this.revoked.size
  }

  private worthCompacting (): boolean {
    return this.lines > COMPACT_FACTOR * this.revoked.size + COMPACT_SLACK
  }

  /** Rewrites the log with the live revocations only (atomic replace, fsynced). */
  private async compact (now: number): Promise<void> {
    for (const [id, e] of this.revoked) if (e <= now) this.revoked.delete(id)
    const text = [...this.revoked].map(([id, exp]) => JSON.stringify({ id, exp }) + '\n').join('')
    await writeFileAtomic(this.file, text)
    this.lines = this.revoked.size
  }
}

async function appendDurably (file: string, text: string): Promise<void> {
  let fd: number
  try {
    fd = await openFd(file, 'a', 0o600)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    await mkdir(path.dirname(file), { recursive: true })
    fd = await openFd(file, 'a', 0o600)
  }
  try {
    await writeFd(fd, text)
    await fsync(fd)
  } finally {
    await close(fd)
  }
}

async function readOptional (file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw err
  }
}

function damaged (file: string, err: unknown): StartupError {
  return new StartupError(`${file} is damaged (${(err as Error).message}); fix or delete it (deleting it re-admits logged-out sessions until they expire, so also change CMS_SESSION_SECRET)`)
}

/** Removes temporary files of this store that a crash in the middle of a write left behind. */
async function removeTempFiles (stateDir: string): Promise<void> {
  let names: string[]
  try {
    names = await readdir(stateDir)
  } catch {
    return
  }
  const leftovers = names.filter(n => n.startsWith(TEMP_PREFIX) && (n.endsWith(`-${REVOCATIONS_FILE}`) || n.endsWith(`-${LEGACY_REVOCATIONS_FILE}`)))
  await Promise.all(leftovers.map(async n => { await rm(path.join(stateDir, n), { force: true }) }))
}
