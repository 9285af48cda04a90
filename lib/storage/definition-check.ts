/** The shape check of a dynamic collection's definition file (`.cms/collections/<name>.json`). */
import { commandValidator, firstCommandError } from '../content/command-validators.js'

/**
 * Why a parsed definition file is not what create_collection writes (checked with that command's
 * own schema, and its two times), or null.
 * @param parsed the file's JSON
 * @returns the reason, or null when it is valid
 */
export function invalidDefinition (parsed: unknown): string | null {
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
