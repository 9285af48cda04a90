/**
 * Reading an entry file's text back only while it is the version the index saw: the index keeps
 * no Markdown body in memory and fetches it from the file when a read needs it.
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { signatureOf } from './entry-file.js'

/** Files up to this size are read synchronously; larger ones through the thread pool. */
const SMALL_FILE_BYTES = 1024 * 1024

/**
 * Reads a file's text if its signature still matches (one open, one fstat, one read, one close).
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
 * The text of an open regular file whose size an fstat just gave, in one read of a byte more than
 * that size: a short read of a regular file is its end, so a file of that size needs no second
 * read (`readFileSync(fd, 'utf8')` reads until a read returns nothing). Decoded as readFileSync
 * decodes (invalid UTF-8 becomes U+FFFD, a BOM is kept).
 * @returns the text, or null when the file is longer or shorter than the size now (changed since
 *   the fstat: the caller's full check reads it again)
 */
function readSized (fd: number, size: number): string | null {
  const buf = Buffer.allocUnsafe(size + 1)
  let n = 0
  while (n <= size) {
    const want = size + 1 - n
    const got = readSync(fd, buf, n, want, n)
    n += got
    if (got < want) break
  }
  return n === size ? buf.toString('utf8', 0, n) : null
}
