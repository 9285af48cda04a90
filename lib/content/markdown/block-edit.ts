/**
 * `applyBlockEdit`: one edited block's inline HTML back into its source range of the Markdown body,
 * spliced (inline-splice.ts) or else converted in the document's style by rehype-remark.
 */
import { unified } from 'unified'
import rehypeRemark, { type Options as RehypeRemarkOptions } from 'rehype-remark'
import remarkGfm from 'remark-gfm'
import remarkStringify from 'remark-stringify'
import { toHtml } from 'hast-util-to-html'
import { visit, SKIP } from 'unist-util-visit'
import type { Root as HastRoot, Element, ElementContent } from 'hast'
import type { Root, RootContent, Heading, PhrasingContent, Parent, Nodes, LinkReference, Definition } from 'mdast'
import type {} from 'mdast-util-mdx'
import { parseSourceHint, sourceHash } from './source-hint.js'
import type { SourceHint } from '../../api-shapes.js'
import { editableBlocks, inlineHost, type EditableBlock } from './editable-blocks.js'
import { sanitizeInlineHtml } from './inline-sanitize.js'
import { firstMarkers } from './body-outline.js'
import { bodyParser, definitionsNamedIn } from './parse-body.js'
import { spliceInlineEdit } from './inline-splice.js'
import { sourceTokens, renderBlock } from './source-units.js'
import { inlineTokens, visibleTokens, sameKeys, footnoteLabel } from './inline-tokens.js'

/** The hint does not name a block of this body (stale, forged or malformed). */
export class SourceMismatchError extends Error {
  constructor (message = 'The source hint does not match the body') {
    super(message)
    this.name = 'SourceMismatchError'
  }
}

/** The block has no inline content to edit (code, table, thematic break) and the edit changes it. */
export class UneditableBlockError extends Error {
  constructor (kind: string, message = `A ${kind} block cannot be edited in place`) {
    super(message)
    this.name = 'UneditableBlockError'
  }
}

/** What applyBlockEdit returns. */
export interface BlockEditResult {
  /** The new body (the same string when nothing changed). */
  body: string
  /** The block's range in the new body. */
  start: number
  end: number
  changed: boolean
}

/**
 * Verifies the hint, sanitizes the HTML and splices its Markdown into the block's range.
 * @param opts.body the current body (the editor's draft body when there is one)
 * @param opts.src the block's `data-cms-src`
 * @param opts.html the block's edited innerHTML
 * @param opts.mdx the body is MDX (its ESM and JSX are never blocks)
 * @returns the new body and the block's new range
 */
export function applyBlockEdit (opts: { body: string, src: string, html: string, mdx?: boolean }): BlockEditResult {
  const { body } = opts
  const parse = bodyParser({ mdx: opts.mdx === true })
  const tree = parse(body)
  const hint = checkedHint(body, opts.src)
  const block = editableBlocks(tree).find(b => b.start === hint.start && b.end === hint.end)
  if (block === undefined) throw new SourceMismatchError('The source hint does not name a block')
  const documentDefinitions = tree.children.filter(c => c.type === 'definition' || c.type === 'footnoteDefinition')
  const urls = new Map<string, Definition>()
  visit(tree, 'definition', (node) => { if (!urls.has(node.url)) urls.set(node.url, node) })
  const incoming = sanitizeInlineHtml(opts.html)
  const unchanged = { body, start: block.start, end: block.end, changed: false }
  const host = inlineHost(block.node)
  const definitions = definitionsNamedIn(body.slice(block.start, block.end), documentDefinitions)
  const source = host === null ? null : sourceTokens(host.children, body, definitions)
  const incomingTokens = visibleTokens(inlineTokens(incoming)[0] ?? [])
  if (block.node.type === 'code') {
    if (codeText(incoming) === block.node.value) return unchanged
  } else if (source !== null && source.length > 0) {
    if (sameKeys(source, incomingTokens)) return unchanged
  } else if (rendered(incoming) === rendered(renderedContent(block, definitions))) {
    return unchanged
  }
  if (host === null) throw new UneditableBlockError(block.node.type)
  const heading: Heading | null = host.type === 'heading' ? host : null
  const first = host.children[0]
  const last = host.children[host.children.length - 1]
  let from = first?.position?.start.offset
  let to = last?.position?.end.offset
  let lead = ''
  if (from === undefined || to === undefined) {
    // An empty block ("-", "##"): the content goes after its marker.
    from = to = block.end
    lead = ' '
  }
  const setext = heading !== null && /\n[ \t]*[=-]+[ \t]*$/.test(body.slice(block.start, block.end))
  const style = blockStyle(block.node, body, tree, urls)
  const convert = (fragment: HastRoot): string => inlineToMarkdown(fragment, {
    kind: heading !== null ? 'heading' : 'paragraph',
    depth: heading?.depth,
    setext,
    original: host.children
  }, style)
  const cont = continuationPrefix(body, from)
  const newline = body.includes('\r\n') ? '\r\n' : '\n'
  // Only what the editor changed is rewritten, where the block's rendering maps to its source.
  let text = lead !== '' || source === null ? null : spliceInlineEdit({ body, from, to, source, incoming: incomingTokens, definitions: documentDefinitions, parse, heading: heading !== null, continuation: cont, newline, convert })
  if (text === null) {
    text = convert(incoming)
    if (text === '' && lead !== '') lead = ''
    text = text.split('\n').map((line, i) => i === 0 ? line : cont + line).join(newline)
  }
  const next = body.slice(0, from) + lead + text + body.slice(to)
  const end = block.end + (next.length - body.length)
  // MDX expressions and JSX in the block are never rewritten (they render nothing we can compare).
  if (!keepsMdx(host.children, body, next.slice(block.start, end))) throw new UneditableBlockError(block.node.type, 'An edit may not change the MDX expressions or JSX of a block; use md_edit')
  return { body: next, start: block.start, end, changed: next !== body }
}

/** The style for one block: its own markers first, then the document's. */
function blockStyle (block: Nodes, body: string, tree: Root, definitions: Map<string, Definition>): DocumentStyle {
  const own = firstMarkers(block, body, {})
  const doc = own.emphasis === undefined || own.strong === undefined ? firstMarkers(tree, body, {}) : {}
  return { emphasis: own.emphasis ?? doc.emphasis ?? '*', strong: own.strong ?? doc.strong ?? '*', definitions }
}

/** Whether the new block text still holds the source of each MDX expression and JSX node, in order. */
function keepsMdx (children: PhrasingContent[], body: string, text: string): boolean {
  let at = 0
  for (const node of children) {
    if (node.type !== 'mdxTextExpression' && node.type !== 'mdxJsxTextElement') continue
    const found = text.indexOf(body.slice(node.position?.start.offset ?? 0, node.position?.end.offset ?? 0), at)
    if (found < 0) return false
    at = found + 1
  }
  return true
}

/**
 * The hint, if it parses and its hash matches the body's text at its range.
 * @param body the body
 * @param src the hint
 * @returns the parsed hint, or SourceMismatchError
 */
export function checkedHint (body: string, src: string): SourceHint {
  const hint = parseSourceHint(src)
  if (hint === null) throw new SourceMismatchError('Malformed source hint')
  if (hint.end > body.length || sourceHash(body.slice(hint.start, hint.end)) !== hint.hash) {
    throw new SourceMismatchError()
  }
  return hint
}

/** The block's content as the browser has it: the block alone rendered and sanitized as renderMarkdown does. */
function renderedContent (block: EditableBlock, definitions: RootContent[]): HastRoot {
  const node = block.node
  return renderBlock(node.type === 'listItem' ? { type: 'list', ordered: false, spread: block.looseList === true, children: [node] } : node, definitions)
}

/** A sanitized fragment's HTML, whitespace collapsed as HTML shows it (for comparing two). */
function rendered (root: HastRoot): string {
  return toHtml(root).replace(/\s+/g, ' ').replace(/ ?<br> ?/g, '<br>').trim()
}

function codeText (root: HastRoot): string {
  let text = ''
  visit(root, 'text', (node) => { text += node.value })
  return text.replace(/\n$/, '')
}

/** What continuation lines of a block's content start with: its first line's `>` kept, other prefixes as spaces. */
function continuationPrefix (body: string, offset: number): string {
  const lineStart = body.lastIndexOf('\n', offset - 1) + 1
  return body.slice(lineStart, offset).replace(/[^>\s]/g, ' ').replace(/\r/g, '')
}

/** The markers and link definitions of a document. */
interface DocumentStyle {
  emphasis: '*' | '_'
  strong: '*' | '_'
  /** Link definitions by URL (the first one for each), for writing links as references. */
  definitions: Map<string, Definition>
}

/** What the content is written into. */
interface InlineTarget {
  /** `heading` writes heading content (escaping a closing `#` sequence), else paragraph content. */
  kind: 'paragraph' | 'heading'
  depth?: number
  setext?: boolean
  /** The block's current inline content, to keep its links' titles and reference style. */
  original: PhrasingContent[]
}

interface LinkKeep { title: string | null, reference?: { identifier: string, label: string, referenceType: LinkReference['referenceType'], text: string } }

/** Converts sanitized inline HTML to Markdown phrasing text (no trailing newline). */
function inlineToMarkdown (fragment: HastRoot, target: InlineTarget, style: DocumentStyle): string {
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

/** Links keep their title and reference style; a new link to a URL the document defines becomes a reference. */
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

/** Raw HTML tags as placeholder text through the conversion (hast-util-to-mdast cuts a paragraph at `html`). */
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
  const footnote: Handle = (_state, node) => {
    const label = String(node.properties.label ?? '')
    return { type: 'footnoteReference', identifier: label.toLowerCase(), label }
  }
  return { kbd: asHtml, sup: asHtml, sub: asHtml, mark: asHtml, abbr: asHtml, 'cms-footnote-ref': footnote }
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
    parent.children[index] = { type: 'element', tagName: 'cms-footnote-ref', properties: { label: footnoteLabel(ref) }, children: [] }
    return SKIP
  })
  return root
}
