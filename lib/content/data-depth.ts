/**
 * A bound on how deeply entry data may nest. Deeper data is refused before anything recursive
 * (schema validation, serializers, structured clones, the JSON response) touches it: those recurse
 * once per level and a few thousand levels overflow the stack. Real content nests a handful of
 * levels; 64 leaves room for any page builder's layout.
 */
import { BadRequestError } from '../errors.js'

/** The deepest nesting of objects and arrays an entry may have (the entry's data is level 1). */
export const MAX_DATA_DEPTH = 64

/**
 * Whether a value nests deeper than MAX_DATA_DEPTH. Walks iteratively, so any depth is measured
 * without recursion.
 * @param value any parsed data
 * @param levelsAbove how many objects enclose the value once stored (0: the value is the data)
 * @returns true when too deep
 */
export function dataTooDeep (value: unknown, levelsAbove = 0): boolean {
  const stack: Array<[unknown, number]> = [[value, levelsAbove + 1]]
  while (stack.length > 0) {
    const [node, level] = stack.pop()!
    if (node === null || typeof node !== 'object') continue
    if (level > MAX_DATA_DEPTH) return true
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, level + 1])
    }
  }
  return false
}

/**
 * Refuses a value that nests deeper than MAX_DATA_DEPTH, counted from where it will be stored.
 * @param value data from a request
 * @param where the request field, for the error
 * @param levelsAbove how many objects enclose the value once stored (0: the value is the data)
 */
export function assertDataDepth (value: unknown, where = 'data', levelsAbove = 0): void {
  if (dataTooDeep(value, levelsAbove)) {
    throw new BadRequestError(`Invalid ${where}: nested deeper than ${MAX_DATA_DEPTH} levels`, { field: where, maxDepth: MAX_DATA_DEPTH })
  }
}
