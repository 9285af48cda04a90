/**
 * The signature of an entry file's on-disk state (`<size>:<mtimeMs>:<ino>:<ctimeMs>`): any change
 * by any writer changes it. The ctime is part of it because size and mtime alone miss an edit that
 * keeps the size and sets the mtime back (`touch -d`, `fs.utimes`): no user can set a ctime back.
 */
import type { Stats } from 'node:fs'

/**
 * A file whose ctime is this close to (or after) the moment it was read may have been written again
 * within the same timestamp tick, unseen by its signature ("racily clean", as git calls it): its
 * persisted content is not trusted at the next start.
 */
export const RACY_MS = 1000

/**
 * The signature of a file's on-disk state.
 * @param st the file's stats
 * @returns the signature string
 */
export function signatureOf (st: Stats): string {
  return `${st.size}:${st.mtimeMs}:${st.ino}:${st.ctimeMs}`
}

/**
 * The file size a signature records.
 * @param sig a signature from signatureOf
 * @returns the size in bytes
 */
export function signatureSize (sig: string): number {
  return Number.parseInt(sig, 10)
}

/**
 * The ctime a signature records.
 * @param sig a signature from signatureOf
 * @returns milliseconds, or NaN for a signature without one
 */
export function signatureCtime (sig: string): number {
  const parts = sig.split(':')
  return parts.length === 4 ? Number(parts[3]) : Number.NaN
}
