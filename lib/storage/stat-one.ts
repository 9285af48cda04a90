/**
 * One file's stat result, shared by the stat worker and the service thread's share of its first
 * pass (`stat-files.ts`); loads nothing of ours but `file-signature.ts`.
 */
import { lstatSync } from 'node:fs'
import { signatureOf } from './file-signature.js'

/** Files per chunk of a stat pass: claimed by one thread, posted together. */
export const STAT_CHUNK = 4096

/**
 * A packed pass's result per file (`PackedFiles`): how its signature compares with its record's,
 * so no signature string crosses to the service's thread (issue 18, eighth pass).
 */
export const SIG_DIFFERS = 0
/** The file has its record's signature, and its ctime is RACY_MS or more older than the pass's start. */
export const SIG_SAME = 1
/** The file has its record's signature, but changed within RACY_MS of the pass's start (racy). */
export const SIG_SAME_RACY = 2
/** The caller must stat the file itself (a link, an unexpected error). */
export const SIG_UNKNOWN = 3

/** How close to a pass's start a file's ctime makes it racy (the index's RACY_MS). */
export const PASS_RACY_MS = 1000

/**
 * A packed pass's flag for a file's result.
 * @param sig the file's result
 * @param same whether it is the record's signature
 * @param statAt when the pass began (before any of its stats)
 * @returns the flag
 */
export function sigFlag (sig: StatResult, same: boolean, statAt: number): number {
  if (sig === undefined) return SIG_UNKNOWN
  if (sig === null || !same) return SIG_DIFFERS
  // NaN (no ctime) counts as racy.
  return statAt - signatureCtime(sig) >= PASS_RACY_MS ? SIG_SAME : SIG_SAME_RACY
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

/** A file's signature, null when it is missing or not a file, undefined when the caller must stat it itself. */
export type StatResult = string | null | undefined

/**
 * Stats one entry file.
 * @param file an absolute path
 * @returns its result (a link, to be checked against the repository, or an unexpected error: undefined)
 */
export function statOne (file: string): StatResult {
  try {
    const st = lstatSync(file, { throwIfNoEntry: false })
    return st === undefined ? null : st.isSymbolicLink() ? undefined : st.isFile() ? signatureOf(st) : null
  } catch {
    return undefined
  }
}
