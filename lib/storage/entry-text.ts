/**
 * Reading an entry file's text back only while it is the version the index saw: the index keeps
 * no Markdown body in memory and fetches it from the file when a read needs it.
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { signatureOf } from './entry-file.js'
import { SMALL_FILE_BYTES } from './quick-fs.js'

/**
 * Reads a file's text if its signature still matches (one open, one fstat, one read, one close:
 * `readFileSync` on the descriptor made a second fstat of its own, issue 18 eleventh pass).
 * @param file absolute entry file path
 * @param sig the signature the index holds for it
 * @param opts `noFollow`: refuse a symbolic link (then the caller's own checks decide)
 * @returns the text, or null when the file is gone, changed, a refused link or cannot be read
 */
export async function readTextIfUnchanged (file: string, sig: string, opts: { noFollow?: boolean } = {}): Promise<string | null> {
  // Where the platform has no O_NOFOLLOW (Windows), a refusing read refuses everything.
  if (opts.noFollow === true && constants.O_NOFOLLOW === undefined) return null
  let fd: number
  try {
    fd = openSync(file, opts.noFollow === true ? constants.O_RDONLY | constants.O_NOFOLLOW : constants.O_RDONLY)
  } catch {
    return null
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile() || signatureOf(st) !== sig) return null
    if (st.size <= SMALL_FILE_BYTES) return readSized(fd, st.size)
  } catch {
    return null
  } finally {
    closeSync(fd)
  }
  // A large file goes through the thread pool; its signature is checked again afterwards.
  try {
    const text = await readFile(file, 'utf8')
    return signatureOf(statSync(file)) === sig ? text : null
  } catch {
    return null
  }
}

/**
 * The text of an open regular file whose size an fstat just gave: at most that many bytes, as
 * `readFileSync(fd, 'utf8')` reads a regular file (it stops at the size it stat-ed, or earlier at
 * the end of the file), decoded the same way (invalid UTF-8 becomes U+FFFD, a BOM is kept).
 */
function readSized (fd: number, size: number): string {
  if (size === 0) return ''
  const buf = Buffer.allocUnsafe(size)
  let n = 0
  while (n < size) {
    const got = readSync(fd, buf, n, size - n, n)
    if (got === 0) break
    n += got
  }
  return buf.toString('utf8', 0, n)
}
