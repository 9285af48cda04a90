/**
 * Reading query parameters strictly: one value each, of the expected type, or a 400.
 */
import type { Context } from 'koa'
import { BadRequestError } from '../errors.js'

/**
 * A single string query parameter.
 * @param ctx the Koa context
 * @param name parameter name
 * @returns the value, or undefined when absent
 */
export function queryString (ctx: Context, name: string): string | undefined {
  const value = ctx.query[name]
  if (value === undefined) return undefined
  if (Array.isArray(value)) throw new BadRequestError(`Query parameter ${name} must be given once`, { field: name })
  return value
}

/**
 * A positive integer query parameter.
 * @param ctx the Koa context
 * @param name parameter name
 * @param fallback value when absent
 * @returns the number
 */
export function queryPositiveInt (ctx: Context, name: string, fallback: number): number {
  const raw = queryString(ctx, name)
  if (raw === undefined || raw === '') return fallback
  if (!/^[0-9]{1,9}$/.test(raw) || Number(raw) < 1) throw new BadRequestError(`Query parameter ${name} must be a positive integer`, { field: name })
  return Number(raw)
}
