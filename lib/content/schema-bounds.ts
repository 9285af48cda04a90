/**
 * The bounds of a collection schema, whether it comes through `create_collection` or through git
 * (`.cms/collections/<name>.json` pulled or committed by hand): its JSON text's length, its
 * nesting, and how many dynamic collections a site holds. They keep each schema's compile short
 * (thread-schema-compiler.ts) and a site's collections few.
 */

/** Longest schema (characters of its JSON text). */
export const MAX_SCHEMA_CHARS = 16_384
/** Deepest nesting of objects and arrays in a schema (`allOf` in `allOf` counts two per level). */
export const MAX_SCHEMA_DEPTH = 24
/** Most dynamic collections a site may hold. */
export const MAX_DYNAMIC_COLLECTIONS = 100

/** Why a schema is over a bound. */
export interface SchemaOverLimit {
  kind: 'depth' | 'size'
  message: string
  limit: number
  length?: number
}

/**
 * Measures a schema against the depth and size bounds, without recursion (a schema nested
 * thousands deep would overflow the stack; JSON.stringify recurses, so depth is checked first).
 * @param schema a parsed schema
 * @returns why it is over a bound, or null
 */
export function schemaOverLimit (schema: unknown): SchemaOverLimit | null {
  const stack: Array<[unknown, number]> = [[schema, 1]]
  while (stack.length > 0) {
    const [node, level] = stack.pop()!
    if (node === null || typeof node !== 'object') continue
    if (level > MAX_SCHEMA_DEPTH) return { kind: 'depth', message: `schema nests deeper than ${MAX_SCHEMA_DEPTH} levels`, limit: MAX_SCHEMA_DEPTH }
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push([child, level + 1])
  }
  const chars = JSON.stringify(schema).length
  if (chars > MAX_SCHEMA_CHARS) return { kind: 'size', message: `schema is longer than ${MAX_SCHEMA_CHARS} characters of JSON`, limit: MAX_SCHEMA_CHARS, length: chars }
  return null
}
