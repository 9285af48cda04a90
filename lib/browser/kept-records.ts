/**
 * Unsaved text kept in localStorage so typing survives a closed tab (Studio forms, the inline editor's
 * blocks): JSON records stamped with `at`, forgotten after 30 days.
 */

const MAX_AGE_MS = 30 * 24 * 3600 * 1000

/** The part of the Web Storage API used here (the Studio's records also load in Node tests). */
interface KeyValueStore {
  getItem: (key: string) => string | null
  setItem: (key: string, value: string) => void
  removeItem: (key: string) => void
}

/** The browser's localStorage, or null where it is disabled or absent. */
function storage (): KeyValueStore | null {
  try { return (globalThis as { localStorage?: KeyValueStore }).localStorage ?? null } catch { return null }
}

/**
 * One kind of kept record: its keys start with `prefix`, its JSON is at most `maxChars` long; a write
 * waits for a pause in typing of `delayMs`, and can be done at once or dropped.
 */
export class KeptRecords<T extends { at: number }> {
  private timer: ReturnType<typeof setTimeout> | undefined
  private pending: (() => void) | null = null

  /** `isRecord` tells a readable record from a damaged or foreign value. */
  constructor (readonly prefix: string, private readonly maxChars: number, private readonly delayMs: number,
    private readonly isRecord: (value: Partial<T>) => boolean) {}

  /** The key of a record: its parts percent-encoded, so an id holding `/`, `:` or spaces collides with no other. */
  key (...parts: string[]): string {
    return this.prefix + parts.map(encodeURIComponent).join(':')
  }

  /** A kept record, or null when there is none or it is not readable. */
  read (key: string): T | null {
    try {
      const value: unknown = JSON.parse(storage()?.getItem(key) ?? 'null')
      return value !== null && typeof value === 'object' && !Array.isArray(value) && this.isRecord(value) ? value as T : null
    } catch { return null }
  }

  /** Keeps a record (null: forgets it); false when its JSON is too long or the browser would not keep it. */
  keep (key: string, record: T | null): boolean {
    if (record === null) { this.forget(key); return true }
    try {
      const raw = JSON.stringify(record)
      const store = storage()
      if (raw.length > this.maxChars || store === null) return false
      store.setItem(key, raw)
      return true
    } catch { return false }
  }

  /** Forgets a record. */
  forget (key: string): void {
    try { storage()?.removeItem(key) } catch {}
  }

  /**
   * The records whose keys start with `key(...parts, '')`, oldest first; those older than 30 days or
   * not readable are forgotten, so storage does not fill up.
   */
  fresh (...parts: string[]): Array<{ key: string, record: T }> {
    const prefix = this.key(...parts, '')
    const found: Array<{ key: string, record: T }> = []
    let keys: string[] = []
    try { keys = Object.keys(storage() ?? {}).filter(key => key.startsWith(prefix)) } catch {}
    for (const key of keys) {
      const record = this.read(key)
      if (record !== null && Date.now() - record.at <= MAX_AGE_MS) found.push({ key, record })
      else this.forget(key)
    }
    return found.sort((a, b) => a.record.at - b.record.at)
  }

  /** Runs `write` (which keeps or forgets records) `delayMs` after the last call, replacing the waiting one. */
  later (write: () => void): void {
    this.pending = write
    clearTimeout(this.timer)
    this.timer = setTimeout(() => { this.flush() }, this.delayMs)
  }

  /** Does the waiting write now. */
  flush (): void {
    clearTimeout(this.timer)
    const write = this.pending
    this.pending = null
    write?.()
  }

  /** Forgets the waiting write. */
  drop (): void {
    clearTimeout(this.timer)
    this.pending = null
  }
}
