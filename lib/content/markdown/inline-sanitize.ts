/**
 * The inline allowlist for edited block HTML (CONTRACT 7 and 11), applied by rehype-sanitize to the
 * fragment a browser would build (no mXSS shape survives); URLs checked as a browser reads them.
 */
import { fromHtml } from 'hast-util-from-html'
import { unified } from 'unified'
import rehypeSanitize, { type Options as Schema } from 'rehype-sanitize'
import type { Root, RootContent, ElementContent, Element } from 'hast'
import { isAllowedHref, urlScheme } from '../../url-scheme.js'

const RENAME: Record<string, string> = { b: 'strong', i: 'em', s: 'del', strike: 'del' }

/** The allowlist as a rehype-sanitize schema (nothing inherited from the page's default schema). */
const INLINE_SCHEMA: Schema = {
  tagNames: ['a', 'strong', 'b', 'em', 'i', 'code', 'del', 's', 'strike', 'br', 'img', 'sup', 'sub', 'kbd', 'mark', 'abbr'],
  attributes: { a: ['href', 'dataFootnoteRef'], img: ['src', 'alt', 'title'], abbr: ['title'] },
  // URLs are checked by isAllowedHref and urlScheme, which read schemes as browsers do
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

/** An image loads an http, https or relative URL (its scheme read as isAllowedHref reads a link's). */
const IMAGE_SCHEMES = new Set<string | undefined>(['', 'http', 'https'])

const sanitizer = unified().use(rehypeSanitize, INLINE_SCHEMA).freeze()

/**
 * Parses and sanitizes edited HTML.
 * @param html the innerHTML the editor sent
 * @returns the sanitized fragment
 */
export function sanitizeInlineHtml (html: string): Root {
  const clean = sanitizer.runSync(fromHtml(html, { fragment: true })) as Root
  return { type: 'root', children: tidy(clean.children, false) }
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
      if (typeof src !== 'string' || src.trim() === '' || !IMAGE_SCHEMES.has(urlScheme(src))) continue
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
