/**
 * Sessions ended by logout: each revoked editorId is remembered until its cookie would have
 * expired anyway, in `.git/cms/revoked-sessions.json`, so a replayed cookie stays refused across
 * restarts. The file is rewritten atomically, pruned of expired ids, on every logout.
 */
import { readFile, readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { writeFileAtomic, TEMP_PREFIX } from '../storage/atomic-write.js'
import { StartupError } from '../errors.js'
import { isSafeIdentityId } from './identity.js'

/** The file name under the state directory. */
export const REVOCATIONS_FILE = 'revoked-sessions.json'

/** Revoked session ids with their expiry; one instance per service. */
export class RevokedSessions {
  readonly file: string
  /** editorId -> exp (milliseconds since epoch). */
  private readonly revoked: Map<string, number>
  /** Writes run one after another, so an older snapshot never lands after a newer one. */
  private writing: Promise<void> = Promise.resolve()

  private constructor (file: string, revoked: Map<string, number>) {
    this.file = file
    this.revoked = revoked
  }

  /**
   * Loads the revocations of a state directory (none when the file does not exist).
   * An unreadable file stops the start: ignoring it would re-admit logged-out sessions.
   * @param stateDir the `.git/cms` directory
   * @param now current time in milliseconds (expired ids are dropped)
   * @returns the loaded set
   */
  static async load (stateDir: string, now: number = Date.now()): Promise<RevokedSessions> {
    const file = path.join(stateDir, REVOCATIONS_FILE)
    await removeTempFiles(stateDir)
    let text: string
    try {
      text = await readFile(file, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new RevokedSessions(file, new Map())
      throw err
    }
    const revoked = new Map<string, number>()
    try {
      const data = JSON.parse(text) as unknown
      if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new Error('not an object')
      for (const [id, exp] of Object.entries(data as Record<string, unknown>)) {
        if (!isSafeIdentityId(id) || typeof exp !== 'number') throw new Error(`bad record for ${JSON.stringify(id.slice(0, 70))}`)
        if (exp > now) revoked.set(id, exp)
      }
    } catch (err) {
      throw new StartupError(`${file} is damaged (${(err as Error).message}); fix or delete it (deleting it re-admits logged-out sessions until they expire, so also change CMS_SESSION_SECRET)`)
    }
    return new RevokedSessions(file, revoked)
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
   * Revokes a session until its expiry and persists the set. The id is refused in memory at once,
   * before the write completes.
   * @param editorId the session's editor id
   * @param exp the session's expiry in milliseconds
   * @param now current time in milliseconds
   * @returns resolves once the file is durable
   */
  async revoke (editorId: string, exp: number, now: number = Date.now()): Promise<void> {
    if (exp <= now) return
    this.revoked.set(editorId, Math.max(exp, this.revoked.get(editorId) ?? 0))
    for (const [id, e] of this.revoked) if (e <= now) this.revoked.delete(id)
    const snapshot = JSON.stringify(Object.fromEntries(this.revoked), null, 2) + '\n'
    const write = this.writing.then(async () => { await writeFileAtomic(this.file, snapshot) })
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
}

/** Removes temporary files of this store that a crash in the middle of a write left behind. */
async function removeTempFiles (stateDir: string): Promise<void> {
  let names: string[]
  try {
    names = await readdir(stateDir)
  } catch {
    return
  }
  const leftovers = names.filter(n => n.startsWith(TEMP_PREFIX) && n.endsWith(`-${REVOCATIONS_FILE}`))
  await Promise.all(leftovers.map(async n => { await rm(path.join(stateDir, n), { force: true }) }))
}
