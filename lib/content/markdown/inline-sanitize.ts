/**
 * The inline allowlist for edited block HTML (CONTRACT 7 and 11): `a[href]` with an http, https,
 * mailto or relative target; `strong`, `em`, `code`, `del`, `br` (`b`, `i`, `s`, `strike` mapped to
 * them); `img[src|alt|title]` with an http, https or relative `src`; `sup`, `sub`, `kbd`, `mark`,
 * `abbr[title]`; and the GFM footnote reference (`sup > a[data-footnote-ref]` with an in-page
 * `href`). Any other element is replaced by its children (its text is kept), the content of script,
 * style and template is dropped, comments are dropped, and every other attribute goes.
 * The HTML is parsed as a fragment by a spec-compliant parser (so what is sanitized is exactly what
 * a browser would build: mXSS shapes cannot survive), then sanitized by rehype-sanitize with this
 * allowlist; URLs are checked once more the way a browser reads them.
 */
import { fromHtml } from 'hast-util-from-html'
import { unified } from 'unified'
import rehypeSanitize, { type Options as Schema } from 'rehype-sanitize'
import type { Root, RootContent, ElementContent, Element } from 'hast'

const RENAME: Record<string, string> = { b: 'strong', i: 'em', s: 'del', strike: 'del' }

/** The allowlist as a rehype-sanitize schema (nothing inherited from the page's default schema). */
export const INLINE_SCHEMA: Schema = {
  tagNames: ['a', 'strong', 'b', 'em', 'i', 'code', 'del', 's', 'strike', 'br', 'img', 'sup', 'sub', 'kbd', 'mark', 'abbr'],
  attributes: { a: ['href', 'dataFootnoteRef'], img: ['src', 'alt', 'title'], abbr: ['title'] },
  // URLs are checked by isAllowedHref and isAllowedSrc, which read schemes as browsers do
  // (case-insensitive, control characters ignored); rehype-sanitize's check is case-sensitive.
  protocols: {},
  strip: ['script', 'style', 'template'],
  clobber: [],
  clobberPrefix: '',
  ancestors: {},
  required: {},
  allowComments: false,
  allowDoctypes: false
}

const sanitizer = unified().use(rehypeSanitize, INLINE_SCHEMA).freeze()

/**
 * Parses and sanitizes edited HTML.
 * @param html the innerHTML the editor sent
 * @returns the sanitized fragment
 */
export function sanitizeInlineHtml (html: string): Root {
  return sanitizeInlineTree(fromHtml(html, { fragment: true }))
}

/**
 * Sanitizes a tree that is already what a browser builds (rendered by us, never received).
 * @param tree the fragment (not changed)
 * @returns the sanitized fragment
 */
export function sanitizeInlineTree (tree: Root): Root {
  const clean = sanitizer.runSync(tree) as Root
  return { type: 'root', children: tidy(clean.children, false) }
}

/**
 * Is this link target allowed? Checked the way a browser reads it: entities are already decoded by
 * the parser; ASCII whitespace and control characters are ignored anywhere (browsers strip them);
 * the scheme is case-insensitive.
 * @param href the decoded attribute value
 * @returns true for http, https, mailto and relative URLs
 */
export function isAllowedHref (href: string): boolean {
  const scheme = schemeOf(href)
  if (scheme === undefined) return false
  return scheme === '' || scheme === 'http' || scheme === 'https' || scheme === 'mailto'
}

/**
 * Is this image source allowed? http, https or relative (never `data:`, `javascript:` or
 * `vbscript:`), read as isAllowedHref reads links.
 * @param src the decoded attribute value
 * @returns true when allowed
 */
export function isAllowedSrc (src: string): boolean {
  const scheme = schemeOf(src)
  return scheme === '' || scheme === 'http' || scheme === 'https'
}

/** The URL's scheme in lower case, '' when relative, undefined when unusable. */
function schemeOf (url: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  const squeezed = url.replace(/[\u0000-\u0020\u007f-\u009f]/g, '').toLowerCase()
  const scheme = /^([a-z][a-z0-9+.-]*):/.exec(squeezed)
  if (scheme === null) return squeezed.startsWith('\\') ? undefined : ''
  return scheme[1]
}

/** Renames synonyms, unwraps links inside links and links or images whose URL a browser would run. */
function tidy (nodes: Array<RootContent | ElementContent>, inLink: boolean): ElementContent[] {
  const out: ElementContent[] = []
  for (const node of nodes) {
    if (node.type === 'text') { out.push({ type: 'text', value: node.value }); continue }
    if (node.type !== 'element') continue
    const name = RENAME[node.tagName] ?? node.tagName
    if (name === 'br') { out.push(element('br', {}, [])); continue }
    if (name === 'img') {
      const { src, alt, title } = node.properties
      if (typeof src !== 'string' || src.trim() === '' || !isAllowedSrc(src)) continue
      const properties: Element['properties'] = { src: src.trim() }
      if (typeof alt === 'string') properties.alt = alt
      if (typeof title === 'string') properties.title = title
      out.push(element('img', properties, []))
      continue
    }
    if (name === 'a') {
      const href = node.properties.href
      const children = tidy(node.children, true)
      if (!inLink && typeof href === 'string' && isAllowedHref(href)) {
        const footnote = node.properties.dataFootnoteRef !== undefined && node.properties.dataFootnoteRef !== false && href.trim().startsWith('#')
        out.push(element('a', footnote ? { href: href.trim(), dataFootnoteRef: true } : { href: href.trim() }, children))
      } else {
        out.push(...children)
      }
      continue
    }
    const properties: Element['properties'] = {}
    if (name === 'abbr' && typeof node.properties.title === 'string') properties.title = node.properties.title
    out.push(element(name, properties, tidy(node.children, inLink)))
  }
  return out
}

function element (tagName: string, properties: Element['properties'], children: ElementContent[]): Element {
  return { type: 'element', tagName, properties, children }
}
