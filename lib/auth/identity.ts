/**
 * What counts as a safe identity: the spec's id grammar, and the shape check that makes a
 * malformed identity from an adapter deny access instead of leaking into drafts and history.
 */
import { createHash } from 'node:crypto'
import type { Identity } from '../config.js'

/** The spec's grammar for identity ids (it keys the draft ref `refs/cms/drafts/<id>`). */
const IDENTITY_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/

/** Whether a value is a safe identity id. */
export function isSafeIdentityId (value: unknown): value is string {
  return typeof value === 'string' && IDENTITY_ID_PATTERN.test(value)
}

/** Why an identity was refused, for the log (never the credentials themselves). */
type IdentityProblem = 'not_an_object' | 'unsafe_id' | 'bad_name' | 'bad_roles'

/**
 * Checks a provider's identity and copies it, so the provider cannot change it afterwards; a
 * missing `name` becomes the id, missing `roles` an empty list, a wrong type a refusal.
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

/** The longest name accepted at sign-in (characters, after cleaning). */
export const MAX_EDITOR_NAME = 64

/**
 * The name typed at sign-in as it is shown: control characters dropped, white space collapsed,
 * NFC. Empty means "no name".
 */
export function cleanEditorName (raw: string): string {
  // eslint-disable-next-line no-control-regex
  return raw.normalize('NFC').replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]/g, '').replace(/\s+/g, ' ').trim()
}

/**
 * The stable editorId of a name given at sign-in: `name-<slug>-<hash>` (slug: up to 24 ASCII
 * letters and digits; hash: SHA-256 of the NFKC lower-cased name), never a path whatever the name.
 */
export function editorIdForName (name: string): string {
  const key = name.normalize('NFKC').toLowerCase()
  const slug = key.normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 24).replace(/-+$/, '')
  const hash = createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 16)
  return slug === '' ? `name-${hash}` : `name-${slug}-${hash}`
}
