/**
 * URL schemes as a browser reads them, for the link allowlists of the server, the Studio's editor
 * and the demo site. This file imports nothing, so the browser bundle can import it too.
 */

/**
 * A URL's scheme as a browser reads it: in any case, with control characters and spaces ignored
 * (`java\tscript:` is `javascript`).
 * @param url the attribute value, entities decoded
 * @returns the scheme in lower case; '' when the URL is relative; undefined when it starts with `\` or `/\`,
 * which a browser reads as `/` (so `\\host` links to another host while looking like a path)
 */
export function urlScheme (url: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  const squeezed = url.replace(/[\u0000-\u0020\u007f-\u009f]/g, '').toLowerCase()
  const scheme = /^([a-z][a-z0-9+.-]*):/.exec(squeezed)
  if (scheme !== null) return scheme[1]
  return squeezed.startsWith('\\') || squeezed.startsWith('/\\') ? undefined : ''
}

/**
 * Is this link target allowed, read as a browser reads it?
 * @param href the link target, entities decoded
 * @returns true for http, https, mailto and relative URLs
 */
export function isAllowedHref (href: string): boolean {
  const scheme = urlScheme(href)
  return scheme === '' || scheme === 'http' || scheme === 'https' || scheme === 'mailto'
}
