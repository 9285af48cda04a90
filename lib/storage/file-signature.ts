/**
 * The signature of an entry file's on-disk state (`<size>:<mtimeMs>:<ino>:<ctimeMs>`): any change
 * by any writer changes it (the ctime catches an edit that sets the mtime back; no one can set a ctime).
 */
import type { Stats } from 'node:fs'

/** A file whose ctime is this close to the moment it was read may have changed again unseen ("racily clean"). */
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
