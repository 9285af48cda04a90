/**
 * Field paths into entry data: a dot path (`sections.0.heading`) or, for keys holding a dot, a
 * JSON array of keys and indexes (`["component.preview"]`); a path starting with `[` is JSON.
 */
import { BadRequestError } from '../errors.js'
import { isReservedKey } from './reserved-keys.js'

/** Splits and checks a dot path: no empty segment, no prototype key. */
export function parseFieldPath (field: string): string[] {
  const segments = field.startsWith('[') ? jsonPath(field) : field.split('.')
  if (segments.length === 0) throw new BadRequestError('Invalid field path: no key', { field: 'field' })
  for (const segment of segments) {
    if (segment === '') throw new BadRequestError('Invalid field path: empty segment', { field: 'field' })
    if (isReservedKey(segment)) throw new BadRequestError('Invalid field path: forbidden segment', { field: 'field' })
  }
  return segments
}

/** A JSON array path: strings (keys) and non-negative integers (list indexes), as segments. */
function jsonPath (field: string): string[] {
  let parsed: unknown
  try { parsed = JSON.parse(field) } catch {
    throw new BadRequestError('Invalid field path: a path starting with [ must be a JSON array of keys', { field: 'field' })
  }
  if (!Array.isArray(parsed) || !parsed.every(p => typeof p === 'string' || (Number.isSafeInteger(p) && (p as number) >= 0))) {
    throw new BadRequestError('Invalid field path: a JSON path holds only strings and non-negative integers', { field: 'field' })
  }
  return parsed.map(p => String(p))
}

/**
 * A copy of `data` with `value` set at `segments`, creating objects on the way (an array index at
 * most one past the end); only the containers on the path are copied, `data` is never changed.
 */
export function setAtPath (data: Record<string, unknown>, segments: string[], value: unknown): Record<string, unknown> {
  const root: Record<string, unknown> = { ...data }
  let node: Record<string, unknown> | unknown[] = root
  for (let i = 0; i < segments.length; i++) {
    const key = segments[i]!
    const last = i === segments.length - 1
    if (Array.isArray(node)) {
      if (!/^(0|[1-9][0-9]{0,6})$/.test(key) || Number(key) > node.length) {
        throw new BadRequestError(`Invalid field path: ${segments.slice(0, i + 1).join('.')} is not an index of the array`, { field: 'field' })
      }
      const idx = Number(key)
      if (last) { node[idx] = value; break }
      node[idx] = descend(node[idx], segments, i)
      node = node[idx] as Record<string, unknown> | unknown[]
    } else {
      if (last) { node[key] = value; break }
      node[key] = descend(Object.hasOwn(node, key) ? node[key] : undefined, segments, i)
      node = node[key] as Record<string, unknown> | unknown[]
    }
  }
  return root
}

/** A copy of the child on the path (the caller's data keeps its own), or a new object. */
function descend (child: unknown, segments: string[], i: number): Record<string, unknown> | unknown[] {
  if (child === undefined || child === null) return {}
  if (Array.isArray(child)) return [...child as unknown[]]
  if (typeof child === 'object') return { ...child as Record<string, unknown> }
  throw new BadRequestError(`Invalid field path: ${segments.slice(0, i + 1).join('.')} is not an object`, { field: 'field' })
}
