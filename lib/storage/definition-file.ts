/**
 * Reading a dynamic collection's definition file (`.cms/collections/<name>.json`) that may have
 * arrived through git: held to create_collection's bounds and shape before anything compiles it.
 */
import { readFile, stat } from 'node:fs/promises'
import { FORMAT_EXTENSIONS, type EntryFormat } from '../content/formats.js'
import { MAX_DYNAMIC_COLLECTIONS, MAX_SCHEMA_CHARS, schemaOverLimit } from '../content/schema-bounds.js'
import type { DynamicCollectionFile } from './collection-registry.js'

/** Largest definition file read (the largest schema allowed, as create_collection writes it, stays well under it). */
const MAX_DEFINITION_FILE_BYTES = 16 * MAX_SCHEMA_CHARS

/**
 * Why a definition is refused: over a bound (422 limit_exceeded) or invalid (422 collection_refused);
 * `format` is the one it names when known (delete_collection removes the files of it).
 */
export interface Refusal { reason: string, invalid: boolean, format: EntryFormat | null }

/**
 * Reads a definition file.
 * @param file its absolute path
 * @param others how many other dynamic collections the site holds
 * @returns its content, why it is refused, or null when there is no such file
 */
export async function readDefinition (file: string, others: number): Promise<Refusal | DynamicCollectionFile | null> {
  let text: string
  try {
    const { size } = await stat(file)
    if (size > MAX_DEFINITION_FILE_BYTES) return { reason: `its definition file is larger than ${MAX_DEFINITION_FILE_BYTES} bytes`, invalid: false, format: null }
    text = await readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    return { reason: `its definition file cannot be read: ${(err as Error).message}`, invalid: true, format: null }
  }
  let parsed: unknown
  try { parsed = JSON.parse(text) } catch (err) {
    return { reason: `its definition file is not JSON: ${(err as Error).message}`, invalid: true, format: null }
  }
  const named = (parsed as { format?: unknown } | null)?.format ?? 'json'
  const format = typeof named === 'string' && Object.hasOwn(FORMAT_EXTENSIONS, named) ? named as EntryFormat : null
  // The shape first, then its size; the command validators (142 KB) load with the first definition file.
  const invalid = invalidDefinition(parsed, await import('../content/command-validators.js'))
  if (invalid !== null) return { reason: invalid, invalid: true, format }
  const over = schemaOverLimit((parsed as DynamicCollectionFile).schema)
  if (over !== null) return { reason: over.message, invalid: false, format }
  if (others >= MAX_DYNAMIC_COLLECTIONS) return { reason: `a site holds at most ${MAX_DYNAMIC_COLLECTIONS} dynamic collections`, invalid: false, format }
  return parsed as DynamicCollectionFile
}

/** Why a parsed definition is not what create_collection writes (its schema and two times), or null. */
function invalidDefinition (parsed: unknown, { commandValidator, firstCommandError }: typeof import('../content/command-validators.js')): string | null {
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return 'its definition is not a JSON object'
  const { schema, format, metadata, created_at: createdAt, updated_at: updatedAt } = parsed as Record<string, unknown>
  const validate = commandValidator('create_collection')
  if (!validate({ type: 'create_collection', collection: 'x', schema, ...(format !== undefined ? { format } : {}), ...(metadata !== undefined ? { metadata } : {}) })) {
    const { field, reason } = firstCommandError(validate)
    return `its definition's ${field} ${reason}`
  }
  for (const [key, value] of [['created_at', createdAt], ['updated_at', updatedAt]] as const) {
    if (typeof value !== 'number' || !Number.isFinite(value)) return `its definition's ${key} must be number`
  }
  return null
}
