/**
 * Whether a name is one of the property names that reach an object's prototype machinery: none of
 * them is ever an entry id, a collection field, a field path segment or a key we assign from user input.
 */
export function isReservedKey (name: string): boolean {
  return name === '__proto__' || name === 'prototype' || name === 'constructor'
}
