/**
 * The name grammar of collections and entries (CONTRACT section 11), checked before any file system or
 * git access, so a name can never be a path escape, a git option or a prototype key.
 */
import { BadRequestError } from '../errors.js'
import { isReservedKey } from '../content/reserved-keys.js'

export const COLLECTION_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/
/** The plain ids of flat collections before section 11 (kept for the demo and old ref names). */
export const ENTRY_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/
/** Control characters (C0, DEL, C1) and the characters no file name of ours may hold. */
const FORBIDDEN_CHAR = /[\u0000-\u001f\u007f-\u009f\\:*?"<>|]/
const LONE_SURROGATE = /[\uD800-\uDFFF]/u
const MAX_ID_BYTES = 1024
const MAX_SEGMENT_BYTES = 255

/**
 * The label of a collection whose definition names none: its name's words, each capitalized.
 * @param name a collection name
 * @returns e.g. `Blog Posts` for `blog-posts`
 */
export function collectionLabel (name: string): string {
  return name.split(/[-_]/).filter(Boolean).map(w => w[0]!.toUpperCase() + w.slice(1)).join(' ')
}

/**
 * Asserts that a value is a valid collection name.
 * @param value anything from a request
 * @returns the name, typed
 */
export function assertCollectionName (value: unknown): string {
  if (!isCollectionName(value)) throw new BadRequestError('Invalid collection name', { field: 'collection' })
  return value
}

/**
 * Whether a value is a valid collection name (what `assertCollectionName` accepts).
 * @param value anything
 * @returns true for a valid name
 */
export function isCollectionName (value: unknown): value is string {
  return typeof value === 'string' && COLLECTION_NAME.test(value) && !isReservedKey(value)
}

/**
 * Why a string is not a valid entry id (NFC form assumed), or null when it is one.
 * @param id the candidate id
 * @returns a short reason, or null
 */
export function entryIdProblem (id: string): string | null {
  if (id === '') return 'is empty'
  if (isReservedKey(id)) return 'is a reserved name'
  if (Buffer.byteLength(id, 'utf8') > MAX_ID_BYTES) return `is longer than ${MAX_ID_BYTES} bytes`
  if (FORBIDDEN_CHAR.test(id)) return 'holds a control character or one of \\ : * ? " < > |'
  for (const segment of id.split('/')) {
    if (segment === '') return 'has an empty path segment'
    if (segment === '.' || segment === '..') return 'has a . or .. segment'
    if (segment.startsWith('.') || segment.startsWith('-')) return 'has a segment starting with . or -'
    if (segment.endsWith(' ') || segment.endsWith('.')) return 'has a segment ending with a space or .'
    if (Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES) return `has a segment longer than ${MAX_SEGMENT_BYTES} bytes`
  }
  return null
}

/**
 * Whether a string is a valid entry id exactly as given (already NFC).
 * @param id the candidate id
 * @returns true when valid
 */
export function isEntryId (id: string): boolean {
  return id === id.normalize('NFC') && entryIdProblem(id) === null
}

/**
 * Asserts that a value is a valid entry id, normalised to NFC.
 * @param value anything from a request
 * @returns the id in NFC form
 */
export function assertEntryId (value: unknown): string {
  if (typeof value !== 'string') throw new BadRequestError('Invalid entry id', { field: 'id' })
  if (LONE_SURROGATE.test(value)) throw new BadRequestError('Invalid entry id: not valid Unicode', { field: 'id' })
  const id = value.normalize('NFC')
  const problem = entryIdProblem(id)
  if (problem !== null) throw new BadRequestError(`Invalid entry id: it ${problem}`, { field: 'id' })
  return id
}
