/**
 * Sessions ended by logout, kept until their cookies expire in `.git/cms/revoked-sessions.json` (a
 * damaged file stops the start), and shared signed on `refs/cms/revocations` (CONTRACT 17).
 */
import { createHmac } from 'node:crypto'
import { readFile, readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { writeFileAtomic, TEMP_PREFIX } from '../storage/atomic-write.js'
import { StartupError } from '../errors.js'
import { isSafeIdentityId } from './identity.js'
import { sameSecret } from './session-cookie.js'

/** The store's file name under the state directory. */
export const REVOCATIONS_FILE = 'revoked-sessions.json'
/** The append-only log of earlier versions, taken in at load. */
export const LEGACY_REVOCATIONS_LOG = 'revoked-sessions.jsonl'

/** Revoked session ids with their expiry; one instance per service. */
export class RevokedSessions {
  readonly #file: string
  readonly #revoked: Map<string, number>
  /** Writes run one after another, so an older state never lands after a newer one. */
  #writing: Promise<void> = Promise.resolve()
  /** Told after each revocation made here is on disk (the remote link schedules its push). */
  readonly listeners = new Set<() => void>()

  private constructor (file: string, revoked: Map<string, number>) {
    this.#file = file
    this.#revoked = revoked
  }

  /**
   * Loads the revocations (a missing file is none), dropping expired ones.
   * @returns the store; rejects with StartupError when the file is damaged
   */
  static async load (stateDir: string, now: number = Date.now()): Promise<RevokedSessions> {
    const file = path.join(stateDir, REVOCATIONS_FILE)
    const logFile = path.join(stateDir, LEGACY_REVOCATIONS_LOG)
    await removeTempFiles(stateDir)
    const revoked = new Map<string, number>()
    const remember = (id: unknown, exp: unknown): void => {
      if (typeof id !== 'string' || !isSafeIdentityId(id) || typeof exp !== 'number') throw new Error(`bad record for ${JSON.stringify(String(id).slice(0, 70))}`)
      if (exp > now) revoked.set(id, Math.max(exp, revoked.get(id) ?? 0))
    }
    const text = await readOptional(file)
    if (text !== null) {
      try {
        const data = JSON.parse(text) as unknown
        if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new Error('not an object')
        for (const [id, exp] of Object.entries(data as Record<string, unknown>)) remember(id, exp)
      } catch (err) {
        throw damaged(file, err)
      }
    }
    const log = await readOptional(logFile)
    if (log !== null) {
      const lines = log.split('\n')
      lines.pop() // empty after the last newline, or a torn append
      for (const [i, line] of lines.entries()) {
        try {
          const record = JSON.parse(line) as { id?: unknown, exp?: unknown }
          remember(record.id, record.exp)
        } catch (err) {
          throw damaged(logFile, new Error(`line ${i + 1}: ${(err as Error).message}`))
        }
      }
    }
    const store = new RevokedSessions(file, revoked)
    if (log !== null) {
      await store.#write(now)
      await rm(logFile, { force: true })
    }
    return store
  }

  /** Whether a session id was revoked (and its cookie not yet expired). */
  has (editorId: string, now: number = Date.now()): boolean {
    const exp = this.#revoked.get(editorId)
    return exp !== undefined && exp > now
  }

  /** Revokes a session until `exp`, durably (resolves once on disk). */
  async revoke (editorId: string, exp: number, now: number = Date.now()): Promise<void> {
    if (exp <= now) return
    this.#revoked.set(editorId, Math.max(exp, this.#revoked.get(editorId) ?? 0))
    await this.#queueWrite(now)
    for (const listener of this.listeners) listener()
  }

  /** The document of `refs/cms/revocations`: the live revocations, sorted, with an HMAC keyed from the session secret. */
  sharedText (secret: string, now: number = Date.now()): string {
    const revoked = Object.fromEntries([...this.#revoked].filter(([, exp]) => exp > now).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0))
    return JSON.stringify({ version: 1, revoked, mac: documentMac(secret, revoked) }) + '\n'
  }

  /**
   * Takes in another instance's live revocations and persists them; a document not signed by this
   * site changes nothing. Returns how many were added, or null when the document was refused.
   */
  async mergeShared (text: string, secret: string, now: number = Date.now()): Promise<number | null> {
    const revoked = verifiedRevocations(text, secret)
    if (revoked === null) return null
    let added = 0
    for (const [id, exp] of Object.entries(revoked)) {
      if (exp <= now || (this.#revoked.get(id) ?? 0) >= exp) continue
      this.#revoked.set(id, exp)
      added++
    }
    if (added > 0) await this.#queueWrite(now)
    return added
  }

  /** @returns resolves once every revocation made so far is written */
  async flush (): Promise<void> {
    await this.#writing
  }

  /** The number of live revocations held. */
  get size (): number {
    return this.#revoked.size
  }

  /** Writes after the writes before it; a failed write must not block later ones (the caller still sees its own failure). */
  async #queueWrite (now: number): Promise<void> {
    const write = this.#writing.then(async () => { await this.#write(now) })
    this.#writing = write.catch(() => {})
    await write
  }

  async #write (now: number): Promise<void> {
    for (const [id, e] of this.#revoked) if (e <= now) this.#revoked.delete(id)
    await writeFileAtomic(this.#file, JSON.stringify(Object.fromEntries(this.#revoked)) + '\n')
  }
}

/** The MAC of a revocations document: HMAC-SHA256 with a key derived from the session secret. */
function documentMac (secret: string, revoked: Record<string, number>): string {
  const key = createHmac('sha256', secret).update('git-cms revocations key').digest()
  return createHmac('sha256', key).update(JSON.stringify(revoked)).digest('base64url')
}

/** The revocations of a document signed by this site, or null. */
function verifiedRevocations (text: string, secret: string): Record<string, number> | null {
  let data: unknown
  try { data = JSON.parse(text) } catch { return null }
  const doc = data as { version?: unknown, revoked?: unknown, mac?: unknown } | null
  if (doc === null || typeof doc !== 'object' || doc.version !== 1 || typeof doc.mac !== 'string') return null
  const revoked = doc.revoked
  if (revoked === null || typeof revoked !== 'object' || Array.isArray(revoked)) return null
  const entries = Object.entries(revoked as Record<string, unknown>)
  if (!entries.every(([id, exp]) => isSafeIdentityId(id) && typeof exp === 'number' && Number.isFinite(exp))) return null
  if (!sameSecret(doc.mac, documentMac(secret, revoked as Record<string, number>))) return null
  return revoked as Record<string, number>
}

async function readOptional (file: string): Promise<string | null> {
  return await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null
    throw err
  })
}

function damaged (file: string, err: unknown): StartupError {
  return new StartupError(`${file} is damaged (${(err as Error).message}); fix or delete it (deleting it re-admits logged-out sessions until they expire, so also change CMS_SESSION_SECRET)`)
}

/** Removes temporary files of this store that a crash in the middle of a write left behind. */
async function removeTempFiles (stateDir: string): Promise<void> {
  const names = await readdir(stateDir).catch(() => [] as string[])
  const leftovers = names.filter(n => n.startsWith(TEMP_PREFIX) && n.endsWith(`-${REVOCATIONS_FILE}`))
  await Promise.all(leftovers.map(async n => { await rm(path.join(stateDir, n), { force: true }) }))
}
