/** Reading query parameters strictly: one value each, of the expected type, or a 400. */
import type { Context } from 'koa'
import { BadRequestError } from '../errors.js'
import { isReservedKey } from '../content/reserved-keys.js'

/** A single string query parameter. */
export function queryString (ctx: Context, name: string): string | undefined {
  const value = ctx.query[name]
  if (value === undefined) return undefined
  if (Array.isArray(value)) throw new BadRequestError(`Query parameter ${name} must be given once`, { field: name })
  return value
}

/** A positive integer query parameter, `fallback` when absent. */
export function queryPositiveInt (ctx: Context, name: string, fallback: number): number {
  const raw = queryString(ctx, name)
  if (raw === undefined || raw === '') return fallback
  if (!/^[0-9]{1,9}$/.test(raw) || Number(raw) < 1) throw new BadRequestError(`Query parameter ${name} must be a positive integer`, { field: name })
  return Number(raw)
}

/** A query parameter that must be one of a few words. */
export function queryEnum<T extends string> (ctx: Context, name: string, allowed: readonly T[]): T | undefined {
  const raw = queryString(ctx, name)
  if (raw === undefined || raw === '') return undefined
  if (!(allowed as readonly string[]).includes(raw)) throw new BadRequestError(`Query parameter ${name} must be one of ${allowed.join(', ')}`, { field: name })
  return raw as T
}

/**
 * A query parameter naming a top-level data field (1 to 128 characters, no control characters,
 * no `.` or `/`, never `__proto__`, `prototype` or `constructor`); whether the collection has
 * that field is the command's check.
 */
export function queryFieldName (ctx: Context, name: string): string | undefined {
  const raw = queryString(ctx, name)
  if (raw === undefined || raw === '') return undefined
  // eslint-disable-next-line no-control-regex
  if (raw.length > 128 || /[\u0000-\u001f\u007f./]/.test(raw) || isReservedKey(raw)) {
    throw new BadRequestError(`Query parameter ${name} must name a field of the collection`, { field: name })
  }
  return raw
}

/** The `collection` and `id` query parameters of a request about one entry (the command checks them). */
export function queryEntry (ctx: Context): { collection: string | undefined, id: string | undefined } {
  return { collection: queryString(ctx, 'collection'), id: queryString(ctx, 'id') }
}
