/**
 * Whether the file system can hold the file an entry id becomes. The id grammar allows segments of
 * 255 bytes, as file systems do, but the file adds its extension and its write goes through a
 * temporary sibling named `.cms-tmp-<12 hex>-<name>` (atomic-write.ts): a 252-byte segment was a
 * 500 (ENAMETOOLONG) that left the folders of a nested id behind. Checked with the id, before
 * anything is created.
 */
import { TEMP_PREFIX } from './atomic-write.js'

/** The longest name (bytes) most file systems hold in one folder entry. */
const MAX_NAME_BYTES = 255
/** Bytes the temporary name adds in front of the file's name: the prefix, 12 hex digits and `-`. */
const TEMP_OVERHEAD_BYTES = Buffer.byteLength(TEMP_PREFIX) + 13

/**
 * The longest file name (bytes, extension included) an entry's file may have.
 */
export const MAX_ENTRY_FILE_NAME_BYTES = MAX_NAME_BYTES - TEMP_OVERHEAD_BYTES

/**
 * Why the file an entry is written to cannot be held, or null when it can.
 * @param file the entry's file (absolute or relative path)
 * @returns a reason, or null
 */
export function fileNameProblem (file: string): string | null {
  const name = file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1)
  if (Buffer.byteLength(name, 'utf8') > MAX_ENTRY_FILE_NAME_BYTES) {
    return `makes a file name longer than ${MAX_ENTRY_FILE_NAME_BYTES} bytes (${name.length} characters), more than the file system holds`
  }
  return null
}
