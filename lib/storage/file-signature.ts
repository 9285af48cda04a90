/**
 * The signature of an entry file's on-disk state (`<size>:<mtimeMs>:<ino>:<ctimeMs>`), in a module
 * of its own so the stat worker (`stat-worker.ts`) loads nothing else.
 */
import type { Stats } from 'node:fs'

/**
 * The signature of a file's on-disk state; any change by any writer changes it. The ctime is part
 * of it because size and mtime alone miss an edit that keeps the size and sets the mtime back
 * (`touch -d`, `fs.utimes`): no user can set a ctime back.
 * @param st the file's stats
 * @returns the signature string
 */
export function signatureOf (st: Stats): string {
  return `${st.size}:${st.mtimeMs}:${st.ino}:${st.ctimeMs}`
}
