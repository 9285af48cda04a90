/**
 * What counts as a safe identity: the spec's id grammar, and the shape check that makes a
 * malformed identity from an adapter deny access instead of leaking into drafts and history.
 */
import type { Identity } from '../config.js'

/** The spec's grammar for identity ids (it keys the draft ref `refs/cms/drafts/<id>`). */
export const IDENTITY_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/

/**
 * Whether a value is a safe identity id.
 * @param value anything
 * @returns true when it is a string matching `^[A-Za-z0-9_-]{1,64}$`
 */
export function isSafeIdentityId (value: unknown): value is string {
  return typeof value === 'string' && IDENTITY_ID_PATTERN.test(value)
}

/** Why an identity was refused, for the log (never the credentials themselves). */
export type IdentityProblem = 'not_an_object' | 'unsafe_id' | 'bad_name' | 'bad_roles'

/**
 * Checks an identity returned by a provider and copies it into a fresh object, so the provider
 * cannot change it afterwards. A missing `name` becomes the id and missing `roles` an empty list;
 * a wrong type anywhere is a refusal.
 * @param value what the provider returned (not null)
 * @returns the identity, or the reason it was refused
 */
export function toIdentity (value: unknown): { identity: Identity } | { problem: IdentityProblem } {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { problem: 'not_an_object' }
  const v = value as { id?: unknown, name?: unknown, roles?: unknown }
  if (!isSafeIdentityId(v.id)) return { problem: 'unsafe_id' }
  if (v.name !== undefined && typeof v.name !== 'string') return { problem: 'bad_name' }
  if (v.roles !== undefined && !(Array.isArray(v.roles) && v.roles.every(r => typeof r === 'string'))) return { problem: 'bad_roles' }
  const roles = Array.isArray(v.roles) ? [...(v.roles as string[])] : []
  return { identity: { id: v.id, name: typeof v.name === 'string' && v.name !== '' ? v.name : v.id, roles } }
}
