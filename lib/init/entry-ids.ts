/**
 * The id a file gets as an entry (CONTRACT section 11: its path below the collection's folder
 * without the extension; a page bundle's folder path; a listed file's name).
 */
import path from 'node:path'

/** The entry id of a file. */
export function entryIdOf (file: string, opts: { listed: boolean, indexFile: string | null }): string {
  const withoutExt = file.slice(0, file.length - path.posix.extname(file).length)
  if (opts.listed) return path.posix.basename(withoutExt)
  if (opts.indexFile !== null && path.posix.basename(withoutExt) === opts.indexFile && withoutExt.includes('/')) return path.posix.dirname(withoutExt)
  return withoutExt
}
