/**
 * Test helpers for session cookies: forge cookies the way an attacker (or a bug) would, with any
 * payload and any secret, independently of lib/auth's own signing code.
 */
import { createHmac } from 'node:crypto'

/**
 * Builds a `<payload>.<signature>` cookie value from an arbitrary payload.
 * @param secret the key to sign with
 * @param payload any JSON value (or a raw string used as the payload's text)
 * @returns the cookie value
 */
export function signCookieValue (secret: string, payload: unknown): string {
  const text = typeof payload === 'string' ? payload : JSON.stringify(payload)
  const encoded = Buffer.from(text).toString('base64url')
  return `${encoded}.${createHmac('sha256', secret).update(encoded).digest('base64url')}`
}

/**
 * A `cms_session=...` cookie pair from an arbitrary payload.
 * @param secret the key to sign with
 * @param payload any JSON value
 * @returns the cookie pair for a Cookie header
 */
export function signCookie (secret: string, payload: unknown): string {
  return `cms_session=${signCookieValue(secret, payload)}`
}

/**
 * Decodes the payload of a cookie pair or value.
 * @param cookie `cms_session=<payload>.<sig>` or just the value
 * @returns the parsed payload
 */
export function cookiePayload (cookie: string): { editor: unknown, editorId: string, exp: number } {
  const value = cookie.replace(/^cms_session=/, '')
  return JSON.parse(Buffer.from(value.split('.')[0] ?? '', 'base64url').toString('utf8'))
}
