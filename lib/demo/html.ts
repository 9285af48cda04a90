/**
 * Escaping for the demo site's hand-written HTML: every piece of content goes through `escapeHtml`
 * (text and attribute values alike), and links through `safeHref`.
 */

const SAFE_SCHEMES = new Set(['http', 'https', 'mailto'])
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Escapes a value for HTML text or a double- or single-quoted attribute. */
export function escapeHtml (value: unknown): string {
  const text = value === null || value === undefined ? '' : String(value)
  return text.replace(/[&<>"']/g, c => ENTITIES[c] ?? c)
}

/**
 * A link target that is safe to put in `href`: relative, http(s) or mailto; anything else
 * (`javascript:`, `data:` ...) becomes `#`.
 */
export function safeHref (value: unknown): string {
  if (typeof value !== 'string') return '#'
  const trimmed = value.trim()
  // Browsers ignore tabs and newlines inside a scheme ("java\tscript:"), so check without them.
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(trimmed.replace(/[\u0000-\u0020]/g, ''))
  const ok = scheme === null || SAFE_SCHEMES.has(scheme[1]!.toLowerCase())
  return ok ? escapeHtml(trimmed) : '#'
}

/** The string value of a field, or a fallback when it is missing or not a string. */
export function textOf (data: Record<string, unknown> | undefined, key: string, fallback = ''): string {
  const value = data !== undefined && Object.hasOwn(data, key) ? data[key] : undefined
  return typeof value === 'string' ? value : fallback
}
