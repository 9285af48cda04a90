/**
 * Removes credentials from text git wrote before it is logged or returned: URL userinfo and query,
 * well-known token shapes (GitHub, GitLab, Bitbucket, bearer) and any secret the caller knows.
 */

/** Token shapes of the common git hosts, redacted wherever they appear. */
const TOKEN_PATTERNS: readonly RegExp[] = [
  /\bgh[pousr]_[A-Za-z0-9]{20,}\b/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}\b/g,
  /\bglpat-[A-Za-z0-9_-]{16,}\b/g,
  /\bgl(?:dt|rt|cbt|ptt|ft|imt|agent|oas)-[A-Za-z0-9_-]{16,}\b/g,
  /\bATBB[A-Za-z0-9_-]{20,}\b/g,
  /\b(?:Bearer|Basic|token)\s+[A-Za-z0-9._~+/=-]{12,}/gi
]

/** `scheme://userinfo@` in a URL; the userinfo may hold a token. */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@'"]+@/gi
/** The query of a URL (`?private_token=...`); a git remote's query is only ever a credential. */
const URL_QUERY = /\b([a-z][a-z0-9+.-]*:\/\/[^\s?#'"]+)\?[^\s#'"]*/gi

/**
 * Redacts credentials from a message.
 * @returns the text without credentials
 */
export function redactSecrets (text: string, secrets: readonly string[] = []): string {
  let out = text
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join('***')
  }
  out = out.replace(URL_USERINFO, '$1***@')
  out = out.replace(URL_QUERY, '$1?***')
  for (const pattern of TOKEN_PATTERNS) out = out.replace(pattern, '***')
  return out
}

/** The secret parts of a remote URL (userinfo and query values), raw and percent-decoded. */
export function secretsOfUrl (url: string): string[] {
  const query = /\?([^#]*)/.exec(url.trim())?.[1] ?? ''
  const queryValues = query.split('&').map(pair => pair.slice(pair.indexOf('=') + 1)).filter(v => v.length >= 4)
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/@]+)@/i.exec(url.trim())
  if (m === null) return longestFirst(withDecoded(queryValues))
  const userinfo = m[1]!
  // With a password, the user name is usually a plain word (`oauth2`, `git`) and stays; without
  // one, the user name is the token (`https://<token>@github.com`).
  const colon = userinfo.indexOf(':')
  const parts = colon === -1 ? [userinfo] : [userinfo, userinfo.slice(colon + 1)]
  return longestFirst(withDecoded([...parts, ...queryValues]))
}

function withDecoded (parts: string[]): string[] {
  return [...parts, ...parts.map(p => { try { return decodeURIComponent(p) } catch { return p } })]
}

/** Long parts first, so a token is removed whole before a shorter piece of it could be. */
function longestFirst (parts: string[]): string[] {
  return [...new Set(parts)].filter(p => p.length >= 4).sort((a, b) => b.length - a.length)
}
