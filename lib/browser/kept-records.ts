/**
 * Unsaved text kept in localStorage so typing survives a closed tab (Studio forms, the inline editor's
 * blocks): JSON records stamped with `at`, forgotten after 30 days.
 */

const MAX_AGE_MS = 30 * 24 * 3600 * 1000

/** The part of the Web Storage API used here (the Studio's records also load in Node tests). */
interface KeyValueStore {
  readonly length: number
  key: (i: number) => string | null
  getItem: (key: string) => string | null
  setItem: (key: string, value: string) => void
  removeItem: (key: string) => void
}

/** The browser's localStorage, or null where it is disabled or absent. */
function storage (): KeyValueStore | null {
  try { return (globalThis as { localStorage?: KeyValueStore }).localStorage ?? null } catch { return null }
}

/** A kept record's JSON object, or null when there is none or it is not readable. */
export function readRecord (key: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(storage()?.getItem(key) ?? 'null')
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : null
  } catch { return null }
}

/** Keeps a record; false when its JSON is longer than `maxChars` or the browser would not keep it. */
export function keepRecord<T extends { at: number }> (key: string, record: T, maxChars: number): boolean {
  try {
    const raw = JSON.stringify(record)
    const store = storage()
    if (raw.length > maxChars || store === null) return false
    store.setItem(key, raw)
    return true
  } catch { return false }
}

/** Forgets a record. */
export function forgetRecord (key: string): void {
  try { storage()?.removeItem(key) } catch {}
}

/** The keys of the records under `prefix`. */
export function recordKeys (prefix: string): string[] {
  const keys: string[] = []
  try {
    const store = storage()
    for (let i = 0; store !== null && i < store.length; i++) {
      const key = store.key(i)
      if (key?.startsWith(prefix) === true) keys.push(key)
    }
  } catch {}
  return keys
}

/** Forgets the records under `prefix` older than 30 days (or unreadable), so storage does not fill up. */
export function forgetStale (prefix: string, now = Date.now()): void {
  for (const key of recordKeys(prefix)) {
    const at = readRecord(key)?.at
    if (typeof at !== 'number' || now - at > MAX_AGE_MS) forgetRecord(key)
  }
}

/** A write that waits for a pause in typing, and can be done at once or dropped. */
export class DelayedWrite {
  private timer: ReturnType<typeof setTimeout> | undefined
  private pending: (() => void) | null = null

  /** Writes `ms` after the last `schedule`. */
  constructor (private readonly ms: number) {}

  /** Replaces the waiting write with `write`. */
  schedule (write: () => void): void {
    this.pending = write
    clearTimeout(this.timer)
    this.timer = setTimeout(() => { this.flush() }, this.ms)
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
