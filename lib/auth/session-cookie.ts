/**
 * The session cookie in the spec's wire format: `<payload>.<signature>`, base64url JSON
 * `{ editor: true, editorId, exp (ms) }` and its base64url HMAC-SHA256 with the session secret.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { isSafeIdentityId } from './identity.js'

/** The cookie's name. */
export const SESSION_COOKIE_NAME = 'cms_session'

/** A session lives 12 hours, fixed (never extended). */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000

/** The claims a valid cookie carries. */
export interface SessionClaims {
  editorId: string
  /** Expiry, milliseconds since epoch. */
  exp: number
  /**
   * A sign-in with a name: the name shown as the editor's (editorId derives from it), and this
   * session's own random id, which logout revokes (the editorId stays usable by a new sign-in).
   */
  name?: string
  sid?: string
}

// A real cookie is about 120 characters; refusing huge values early keeps verification cheap.
const MAX_COOKIE_LENGTH = 1024
const BASE64URL = /^[A-Za-z0-9_-]+$/
const SIGNATURE_BYTES = 32

/** Signs claims into a cookie value. */
export function signSession (secret: string, claims: SessionClaims): string {
  const named = claims.name !== undefined && claims.sid !== undefined ? { name: claims.name, sid: claims.sid } : {}
  const payload = Buffer.from(JSON.stringify({ editor: true, editorId: claims.editorId, exp: claims.exp, ...named })).toString('base64url')
  return `${payload}.${hmac(secret, payload).toString('base64url')}`
}

/**
 * Verifies a cookie value with the spec's steps (signature in constant time, `exp` in the future,
 * a valid `editorId`); null when any step fails. Revocation is the caller's.
 */
export function verifySession (secret: string, value: string, now: number): SessionClaims | null {
  if (value.length > MAX_COOKIE_LENGTH) return null
  const dot = value.indexOf('.')
  if (dot <= 0 || dot !== value.lastIndexOf('.')) return null
  const payload = value.slice(0, dot)
  const signatureText = value.slice(dot + 1)
  if (signatureText === '' || !BASE64URL.test(signatureText) || !BASE64URL.test(payload)) return null
  const signature = Buffer.from(signatureText, 'base64url')
  // Only the canonical encoding of a 32-byte digest is accepted, so a signature has one spelling.
  if (signature.length !== SIGNATURE_BYTES || signature.toString('base64url') !== signatureText) return null
  const expected = hmac(secret, payload)
  if (!timingSafeEqual(signature, expected)) return null
  const claims = parsePayload(payload)
  if (claims === null || !(claims.exp > now)) return null
  return claims
}

/** The Set-Cookie header value that stores a session, or with `null` removes the cookie. */
export function sessionCookieHeader (value: string | null, secure: boolean): string {
  const maxAge = value === null ? 0 : Math.floor(SESSION_TTL_MS / 1000)
  const parts = [`${SESSION_COOKIE_NAME}=${value ?? ''}`, `Max-Age=${maxAge}`, 'Path=/', 'HttpOnly', 'SameSite=Lax']
  if (secure) parts.push('Secure')
  return parts.join('; ')
}

/** A bound editorId: 16 random bytes, then 9 bytes of the password's tag (base64url: 22 + 12). */
const RANDOM_CHARS = 22
const TAG_CHARS = 12

/**
 * A new editorId bound to the password it is issued under (CONTRACT 17): random, then a tag of the
 * session secret and this password, so a new `CMS_EDIT_PASSWORD` ends every older session.
 */
export function boundEditorId (secret: string, password: string): string {
  const random = randomBytes(16).toString('base64url')
  return random + passwordTag(secret, password, random)
}

/** Whether an editorId was issued under this password (and this secret). */
export function isBoundTo (secret: string, password: string, editorId: string): boolean {
  return editorId.length === RANDOM_CHARS + TAG_CHARS && sameSecret(editorId.slice(RANDOM_CHARS), passwordTag(secret, password, editorId.slice(0, RANDOM_CHARS)))
}

/** Whether a secret someone sent equals the expected one, in constant time whatever the lengths (SHA-256 digests compared). */
export function sameSecret (given: string, expected: string): boolean {
  const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest()
  return timingSafeEqual(digest(given), digest(expected))
}

function passwordTag (secret: string, password: string, random: string): string {
  // The message starts with text no base64url cookie payload can hold (NUL), so it never signs one.
  return createHmac('sha256', secret).update('git-cms session password\0').update(random).update('\0').update(password, 'utf8').digest().subarray(0, 9).toString('base64url')
}

function hmac (secret: string, payload: string): Buffer {
  return createHmac('sha256', secret).update(payload).digest()
}

function parsePayload (payload: string): SessionClaims | null {
  let data: unknown
  try {
    data = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'))
  } catch {
    return null
  }
  if (data === null || typeof data !== 'object') return null
  const d = data as { editor?: unknown, editorId?: unknown, exp?: unknown, name?: unknown, sid?: unknown }
  if (d.editor !== true || typeof d.exp !== 'number' || !Number.isFinite(d.exp)) return null
  if (!isSafeIdentityId(d.editorId)) return null
  if (d.name === undefined && d.sid === undefined) return { editorId: d.editorId, exp: d.exp }
  if (typeof d.name !== 'string' || d.name === '' || !isSafeIdentityId(d.sid)) return null
  return { editorId: d.editorId, exp: d.exp, name: d.name, sid: d.sid }
}
