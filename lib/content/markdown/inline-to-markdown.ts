/**
 * Sanitized inline HTML to the Markdown of a block's content, in the document's style: rehype-remark
 * then remark-stringify (which escapes typed text that would read as syntax), links given back the
 * titles and reference style they had; `kbd`, `sup`, `sub`, `mark`, `abbr` written as inline HTML.
 */
import { unified } from 'unified'
import rehypeRemark from 'rehype-remark'
import remarkGfm from 'remark-gfm'
import remarkStringify from 'remark-stringify'
import type { Root as HastRoot } from 'hast'
import type { Root, RootContent, PhrasingContent, Parent, Nodes, LinkReference, Definition } from 'mdast'
import type { Element, ElementContent } from 'hast'
import type { Options as RehypeRemarkOptions } from 'rehype-remark'
import { visit, SKIP } from 'unist-util-visit'

/** The markers and link definitions of a document. */
export interface DocumentStyle {
  emphasis: '*' | '_'
  strong: '*' | '_'
  /** Link definitions by URL (the first one for each), for writing links as references. */
  definitions: Map<string, Definition>
}

/** What the content is written into. */
export interface InlineTarget {
  /** `heading` writes heading content (escaping a closing `#` sequence), else paragraph content. */
  kind: 'paragraph' | 'heading'
  depth?: number
  setext?: boolean
  /** The block's current inline content, to keep its links' titles and reference style. */
  original: PhrasingContent[]
}

interface LinkKeep { title: string | null, reference?: { identifier: string, label: string, referenceType: LinkReference['referenceType'], text: string } }

/**
 * Converts sanitized inline HTML to Markdown phrasing text (no trailing newline).
 * @param fragment the sanitized fragment
 * @param target the block it goes into
 * @param style the document's style
 * @returns the Markdown of the content
 */
export function inlineToMarkdown (fragment: HastRoot, target: InlineTarget, style: DocumentStyle): string {
  const raw = new RawTags()
  const mdast = unified().use(rehypeRemark, { handlers: htmlHandlers(raw) }).runSync(footnoteRefs(structuredClone(fragment))) as Root
  const phrasing = tidy(flatten(mdast.children), target.kind === 'heading')
  restoreLinks(phrasing, target.original, style)
  const intraword = hasIntrawordAttention(phrasing)
  const node: RootContent = target.kind === 'heading'
    ? { type: 'heading', depth: (target.depth ?? 1) as 1, children: phrasing }
    : { type: 'paragraph', children: phrasing }
  const processor = unified().use(remarkGfm).use(remarkStringify, {
    // `_` cannot open or close emphasis inside a word; `*` can.
    emphasis: intraword ? '*' : style.emphasis,
    strong: intraword ? '*' : style.strong,
    setext: target.setext === true,
    bullet: '-'
  })
  let text = raw.restore(processor.stringify({ type: 'root', children: [node] }).replace(/\n+$/, ''))
  if (target.kind === 'heading') {
    text = target.setext === true
      ? text.replace(/\n[=-]+$/, '')
      : text.replace(/^#+(?: |$)/, '')
  }
  return text
}

/** Removes what Markdown cannot write: an empty code span, and a line break in a heading (a space instead). */
function tidy (nodes: PhrasingContent[], heading: boolean): PhrasingContent[] {
  const out: PhrasingContent[] = []
  for (const node of nodes) {
    if (node.type === 'inlineCode' && node.value.trim() === '') {
      if (node.value !== '') out.push({ type: 'text', value: ' ' })
    } else if (node.type === 'break' && heading) {
      out.push({ type: 'text', value: ' ' })
    } else {
      if ('children' in node) node.children = tidy(node.children as PhrasingContent[], heading) as typeof node.children
      out.push(node)
    }
  }
  return out
}

/** Block-level wrappers (should any appear) become their content, joined by hard breaks. */
function flatten (nodes: RootContent[]): PhrasingContent[] {
  const out: PhrasingContent[] = []
  let afterBlock = false
  for (const node of nodes) {
    // Inline HTML is not phrasing to hast-util-to-mdast: it cuts the paragraph it sits in.
    const wasBlock = afterBlock
    afterBlock = node.type === 'paragraph' || node.type === 'heading'
    if (node.type === 'paragraph' || node.type === 'heading') {
      if (out.length > 0 && wasBlock) out.push({ type: 'break' })
      out.push(...node.children)
    } else if ('children' in node && !isPhrasing(node)) {
      out.push(...flatten(node.children as RootContent[]))
    } else if (isPhrasing(node)) {
      out.push(node)
    }
  }
  return out
}

const PHRASING = new Set(['text', 'emphasis', 'strong', 'delete', 'inlineCode', 'break', 'link', 'linkReference', 'image', 'imageReference', 'html', 'footnoteReference'])
function isPhrasing (node: RootContent): node is PhrasingContent { return PHRASING.has(node.type) }

/**
 * A link to where one of the block's links pointed keeps its title and reference style; a new link
 * to a URL the document defines becomes a full reference to that definition.
 */
function restoreLinks (phrasing: PhrasingContent[], original: PhrasingContent[], style: DocumentStyle): void {
  const keep = new Map<string, LinkKeep>()
  const root: Parent = { type: 'paragraph', children: original }
  visit(root as Nodes, (node) => {
    if (node.type === 'link' && !keep.has(node.url)) keep.set(node.url, { title: node.title ?? null })
    if (node.type === 'linkReference') {
      const def = [...style.definitions.values()].find(d => d.identifier === node.identifier)
      if (def !== undefined && !keep.has(def.url)) {
        keep.set(def.url, { title: def.title ?? null, reference: { identifier: node.identifier, label: node.label ?? node.identifier, referenceType: node.referenceType, text: textOf(node) } })
      }
    }
  })
  const host: Parent = { type: 'paragraph', children: phrasing }
  visit(host as Nodes, 'link', (node, index, parent) => {
    if (parent === undefined || index === undefined) return
    const kept = keep.get(node.url)
    const ref = kept?.reference ?? definitionRef(style, node.url)
    if (ref !== undefined) {
      const sameText = textOf(node) === ref.text
      const referenceType = sameText ? ref.referenceType : 'full'
      parent.children[index] = { type: 'linkReference', identifier: ref.identifier, label: ref.label, referenceType, children: node.children } as LinkReference
      return SKIP
    }
    if (kept !== undefined) node.title = kept.title
  })
}

function definitionRef (style: DocumentStyle, url: string): LinkKeep['reference'] | undefined {
  const def = style.definitions.get(url)
  if (def === undefined) return undefined
  const label = def.label ?? def.identifier
  return { identifier: def.identifier, label, referenceType: 'full', text: label }
}

/** Emphasis or strong directly between word characters (`un*frigging*believable`). */
function hasIntrawordAttention (phrasing: PhrasingContent[]): boolean {
  let found = false
  const root: Parent = { type: 'paragraph', children: phrasing }
  visit(root as Nodes, (node, index, parent) => {
    if ((node.type !== 'emphasis' && node.type !== 'strong') || parent === undefined || index === undefined) return
    const before = parent.children[index - 1]
    const after = parent.children[index + 1]
    if (before?.type === 'text' && /[\p{L}\p{N}]$/u.test(before.value)) found = true
    if (after?.type === 'text' && /^[\p{L}\p{N}]/u.test(after.value)) found = true
  })
  return found
}

/** The plain text of phrasing content. */
function textOf (node: Nodes): string {
  if ('value' in node && typeof node.value === 'string') return node.value
  if ('children' in node) return (node.children as Nodes[]).map(textOf).join('')
  return ''
}

type Handlers = NonNullable<RehypeRemarkOptions['handlers']>
type Handle = Handlers[string]

/**
 * Raw HTML tags travel through the conversion as placeholder text (nothing escapes it), since
 * hast-util-to-mdast would cut the paragraph at an `html` node and trim the spaces around it.
 */
class RawTags {
  readonly tags: string[] = []
  placeholder (html: string): PhrasingContent {
    this.tags.push(html)
    return { type: 'text', value: `\uE001${this.tags.length - 1}\uE002` }
  }

  restore (text: string): string {
    return text.replace(/\uE001(\d+)\uE002/g, (_, i: string) => this.tags[Number(i)] ?? '')
  }
}

/** Handlers writing an element as inline HTML around its converted children (attributes escaped). */
function htmlHandlers (raw: RawTags): Handlers {
  const asHtml: Handle = (state, node) => {
    const title = node.tagName === 'abbr' && typeof node.properties.title === 'string'
      ? ` title="${node.properties.title.replace(/[&<>"']/g, c => `&#${c.charCodeAt(0)};`)}"`
      : ''
    return [raw.placeholder(`<${node.tagName}${title}>`), ...state.all(node), raw.placeholder(`</${node.tagName}>`)] as PhrasingContent[]
  }
  return { kbd: asHtml, sup: asHtml, sub: asHtml, mark: asHtml, abbr: asHtml, ...FOOTNOTE_HANDLERS }
}

const FOOTNOTE_HANDLERS: Handlers = {
  'cms-footnote-ref': (_state, node) => {
    const label = String(node.properties.label ?? '')
    return { type: 'footnoteReference', identifier: label.toLowerCase(), label }
  }
}

/** Footnote references (`sup > a[data-footnote-ref]`, the sup optional) become an element written as `[^label]`. */
function footnoteRefs (root: HastRoot): HastRoot {
  const refOf = (node: ElementContent): Element | undefined => {
    if (node.type !== 'element') return undefined
    if (node.tagName === 'a' && node.properties.dataFootnoteRef === true) return node
    const only = node.children.filter(c => !(c.type === 'text' && c.value.trim() === ''))
    return node.tagName === 'sup' && only.length === 1 && only[0] !== undefined ? refOf(only[0]) : undefined
  }
  visit(root, 'element', (node, index, parent) => {
    const ref = refOf(node)
    if (ref === undefined || parent === undefined || index === undefined) return
    let label = String(ref.properties.href ?? '').replace(/^#(?:user-content-)?fn-/, '')
    try { label = decodeURIComponent(label) } catch {}
    parent.children[index] = { type: 'element', tagName: 'cms-footnote-ref', properties: { label }, children: [] }
    return SKIP
  })
  return root
}
