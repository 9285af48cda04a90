/**
 * A bound on how deeply entry data may nest, checked before anything recursive (validation,
 * serializers, structured clones) touches it: a few thousand levels overflow the stack.
 */
import { BadRequestError } from '../errors.js'

/** The deepest nesting of objects and arrays an entry may have (the entry's data is level 1). */
export const MAX_DATA_DEPTH = 64

/** Whether a value nests deeper than MAX_DATA_DEPTH (by default). */
export function dataTooDeep (value: unknown, levelsAbove = 0, maxDepth = MAX_DATA_DEPTH): boolean {
  // Iterative, so any depth is measured without recursion.
  const stack: Array<[unknown, number]> = [[value, levelsAbove + 1]]
  while (stack.length > 0) {
    const [node, level] = stack.pop()!
    if (node === null || typeof node !== 'object') continue
    if (level > maxDepth) return true
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, level + 1])
    }
  }
  return false
}

/** Refuses a value that nests deeper than MAX_DATA_DEPTH, counted from where it will be stored. */
export function assertDataDepth (value: unknown, where = 'data', levelsAbove = 0): void {
  if (dataTooDeep(value, levelsAbove)) {
    throw new BadRequestError(`Invalid ${where}: nested deeper than ${MAX_DATA_DEPTH} levels`, { field: where, maxDepth: MAX_DATA_DEPTH })
  }
}
