/**
 * The name grammar of collections and entries. Checked before any file system or git access, so a
 * name can never be a path, a git option or a prototype key.
 */
import { BadRequestError } from '../errors.js'

export const COLLECTION_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/
export const ENTRY_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/
const RESERVED = new Set(['__proto__', 'prototype', 'constructor'])

/**
 * Asserts that a value is a valid collection name.
 * @param value anything from a request
 * @returns the name, typed
 */
export function assertCollectionName (value: unknown): string {
  if (typeof value !== 'string' || !COLLECTION_NAME.test(value) || RESERVED.has(value)) {
    throw new BadRequestError('Invalid collection name', { field: 'collection' })
  }
  return value
}

/**
 * Asserts that a value is a valid entry id.
 * @param value anything from a request
 * @returns the id, typed
 */
export function assertEntryId (value: unknown): string {
  if (typeof value !== 'string' || !ENTRY_ID.test(value) || RESERVED.has(value)) {
    throw new BadRequestError('Invalid entry id', { field: 'id' })
  }
  return value
}
