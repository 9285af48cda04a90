/**
 * The id a file gets as an entry (CONTRACT section 11: its path below the collection's folder
 * without the extension; a page bundle's folder path; a listed file's name), and whether that id
 * fits the id grammar, so init can name the files the service would refuse as ids.
 */
import path from 'node:path'
import { isReservedKey } from '../content/reserved-keys.js'

const FORBIDDEN = /[\u0000-\u001f\u007f/\\:*?"<>|]/
const MAX_SEGMENT_BYTES = 255
const MAX_ID_BYTES = 1024

/**
 * The entry id of a file.
 * @param file the file, relative to the collection's folder (or to the repository for `files`)
 * @param opts `listed`: a `files` collection (the id is the file name); `indexFile`: bundles' index name
 * @returns the id
 */
export function entryIdOf (file: string, opts: { listed: boolean, indexFile: string | null }): string {
  const withoutExt = file.slice(0, file.length - path.posix.extname(file).length)
  if (opts.listed) return path.posix.basename(withoutExt)
  if (opts.indexFile !== null && path.posix.basename(withoutExt) === opts.indexFile && withoutExt.includes('/')) return path.posix.dirname(withoutExt)
  return withoutExt
}

/**
 * Why an id breaks the grammar, or null when it is a valid id.
 * @param id an entry id
 * @returns the reason, or null
 */
export function idProblem (id: string): string | null {
  if (Buffer.byteLength(id) > MAX_ID_BYTES) return `longer than ${MAX_ID_BYTES} bytes`
  for (const segment of id.normalize('NFC').split('/')) {
    if (segment === '' || segment === '.' || segment === '..') return `has an empty, "." or ".." part`
    if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES) return `a part is longer than ${MAX_SEGMENT_BYTES} bytes`
    if (FORBIDDEN.test(segment)) return 'holds a control character or one of \\ : * ? " < > |'
    if (/^[.-]/.test(segment)) return 'a part starts with "." or "-"'
    if (/[ .]$/.test(segment)) return 'a part ends with a space or "."'
    if (isReservedKey(segment)) return `"${segment}" is reserved`
  }
  return null
}
