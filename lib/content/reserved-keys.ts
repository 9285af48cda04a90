/**
 * The property names that reach an object's prototype machinery. None of them is ever an entry id,
 * a collection field, a field path segment or a key we assign from user input.
 */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'prototype', 'constructor'])

/** Whether a name is one of the reserved property names. */
export function isReservedKey (name: string): boolean {
  return RESERVED_KEYS.has(name)
}
