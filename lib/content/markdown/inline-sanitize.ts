/**
 * The inline allowlist for edited block HTML (CONTRACT 7): `a[href]` with an http, https, mailto
 * or relative target, `strong`, `em`, `code`, `del`, `br` (`b`, `i`, `s`, `strike` mapped to
 * them). Any other element is replaced by its children (its text is kept), the content of script,
 * style and template is dropped, comments are dropped, and every attribute but `href` goes.
 * The HTML is parsed as a fragment by a spec-compliant parser, so what survives is exactly what a
 * browser would build; nothing is ever re-serialized from strings.
 */
import { fromHtml } from 'hast-util-from-html'
import type { Root, RootContent, ElementContent, Element } from 'hast'

const RENAME: Record<string, string> = { b: 'strong', strong: 'strong', i: 'em', em: 'em', code: 'code', del: 'del', s: 'del', strike: 'del', br: 'br' }
const DROP = new Set(['script', 'style', 'template'])

/**
 * Parses and sanitizes edited HTML.
 * @param html the innerHTML the editor sent
 * @returns the sanitized fragment
 */
export function sanitizeInlineHtml (html: string): Root {
  const tree = fromHtml(html, { fragment: true })
  return { type: 'root', children: clean(tree.children, false) }
}

/**
 * Is this link target allowed? Checked the way a browser reads it: entities are already decoded by
 * the parser; ASCII whitespace and control characters are ignored anywhere (browsers strip them);
 * the scheme is case-insensitive.
 * @param href the decoded attribute value
 * @returns true for http, https, mailto and relative URLs
 */
export function isAllowedHref (href: string): boolean {
  // eslint-disable-next-line no-control-regex
  const squeezed = href.replace(/[\u0000-\u0020\u007f-\u009f]/g, '').toLowerCase()
  const scheme = /^([a-z][a-z0-9+.-]*):/.exec(squeezed)
  if (scheme === null) return !squeezed.startsWith('\\')
  return scheme[1] === 'http' || scheme[1] === 'https' || scheme[1] === 'mailto'
}

function clean (nodes: Array<RootContent | ElementContent>, inLink: boolean): ElementContent[] {
  const out: ElementContent[] = []
  for (const node of nodes) {
    if (node.type === 'text') { out.push({ type: 'text', value: node.value }); continue }
    if (node.type !== 'element') continue
    const name = node.tagName.toLowerCase()
    if (DROP.has(name)) continue
    if (name === 'a') {
      const href = node.properties.href
      const children = clean(node.children, true)
      if (!inLink && typeof href === 'string' && isAllowedHref(href)) {
        out.push({ type: 'element', tagName: 'a', properties: { href: href.trim() }, children })
      } else {
        out.push(...children)
      }
      continue
    }
    const mapped = RENAME[name]
    if (mapped === 'br') { out.push(element('br', [])); continue }
    const children = clean(node.children, inLink)
    if (mapped !== undefined) out.push(element(mapped, children))
    else out.push(...children)
  }
  return out
}

function element (tagName: string, children: ElementContent[]): Element {
  return { type: 'element', tagName, properties: {}, children }
}
