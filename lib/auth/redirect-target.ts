/**
 * The return target handed to a provider's login or logout URL: only a path on this site, so the
 * CMS never helps send a browser to an address an attacker chose.
 * @returns the value when it is a local absolute path, else '/'
 */
export function safeRedirectTarget (value: unknown): string {
  if (typeof value !== 'string' || value.length > 2048) return '/'
  // '//host' and '/\host' are protocol-relative in browsers; control characters are never needed.
  if (!value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\') || /[\u0000-\u001f\u007f]/.test(value)) return '/'
  return value
}
