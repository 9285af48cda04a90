/**
 * One file's stat result, shared by the stat worker and the service thread's share of its first
 * pass (`stat-files.ts`); loads nothing of ours but `file-signature.ts`.
 */
import { lstatSync } from 'node:fs'
import { signatureOf } from './file-signature.js'

/** Files per chunk of a stat pass: claimed by one thread, posted together. */
export const STAT_CHUNK = 4096

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
