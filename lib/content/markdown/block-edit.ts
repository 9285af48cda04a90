/**
 * `applyBlockEdit`: one edited block's inline HTML back into its source range of the Markdown body,
 * written as md_edit writes a text edit and marks (text-edit.ts) or else converted in the document's
 * style by rehype-remark.
 */
import { unified } from 'unified'
import remarkRehype from 'remark-rehype'
import rehypeRemark, { type Options as RehypeRemarkOptions } from 'rehype-remark'
import remarkGfm from 'remark-gfm'
import remarkStringify from 'remark-stringify'
import { toHtml } from 'hast-util-to-html'
import { visit, SKIP } from 'unist-util-visit'
import type { Root as HastRoot, Element, ElementContent } from 'hast'
import type { Root, RootContent, Heading, Paragraph, PhrasingContent, Parent, Nodes, LinkReference, Definition } from 'mdast'
import type {} from 'mdast-util-mdx'
import { formatSourceHint } from './source-hint.js'
import { inlineHost } from './editable-blocks.js'
import { listBlocks, type ListedBlock } from './block-list.js'
import { sanitizeInlineHtml } from './inline-sanitize.js'
import { firstMarkers, outlineOf, regionParser, type BodyOutline, type DocumentMarkers } from './body-outline.js'
import { bodyParser, definitionsNamedIn } from './parse-body.js'
import { sanitizeRendered } from './render.js'
import { applyTextEdit, checkedHint, contentRange, SourceMismatchError, UneditableBlockError, UnmappableEditError, type BlockEditResult } from './text-edit.js'
import type { TextMark } from '../../api-shapes.js'

/**
 * Verifies the hint, sanitizes the HTML and writes its Markdown into the block's range.
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
  const block = writableBlock(tree, body, hint.start, hint.end)
  if (block === undefined) throw new SourceMismatchError('The source hint does not name a block')
  const documentDefinitions = tree.children.filter(c => c.type === 'definition' || c.type === 'footnoteDefinition')
  const urls = new Map<string, Definition>()
  visit(tree, 'definition', (node) => { if (!urls.has(node.url)) urls.set(node.url, node) })
  const incoming = sanitizeInlineHtml(opts.html)
  const unchanged = { body, start: block.start, end: block.end, changed: false }
  const host = inlineHost(block.node)
  const definitions = definitionsNamedIn(body.slice(block.start, block.end), documentDefinitions)
  const current = renderedContent(block, definitions)
  const shown = shownText(incoming)
  if (block.node.type === 'code') {
    if (textAndMarks(incoming).text.replace(/\n$/, '') === block.node.value) return unchanged
  } else if (shownText(current) === shown) {
    return unchanged
  }
  if (host === null) throw new UneditableBlockError(block.node.type)
  const outline = outlineOf(tree, body)
  // The edited body is parsed only in the block's top-level node.
  const region = regionParser(outline, body, block.start, parse)
  const rendersAs = (edit: BlockEditResult): boolean => {
    const again = writableBlock(region.parse(edit.body), edit.body, block.start, edit.end)
    const named = definitionsNamedIn(edit.body.slice(block.start, edit.end), documentDefinitions)
    return again !== undefined && shownText(renderedContent(again, named)) === shown
  }
  // Only what the editor changed is rewritten, where md_edit's text edit and marks say it.
  const asText = editAsText({ body, block, host, current, incoming, mdx: opts.mdx === true, outline, urls, rendersAs })
  if (asText !== null) return asText
  // MDX expressions and JSX in the block are never rewritten (they render nothing we can compare).
  if (host.children.some(node => node.type === 'mdxTextExpression' || node.type === 'mdxJsxTextElement')) {
    throw new UneditableBlockError(block.node.type, 'An edit may not change the MDX expressions or JSX of a block; use md_edit')
  }
  const { start: from, end: to } = contentRange(block)
  // An empty block ("-", "##"): the content goes after its marker.
  let lead = host.children.length === 0 ? ' ' : ''
  const setext = host.type === 'heading' && /\n[ \t]*[=-]+[ \t]*$/.test(body.slice(block.start, block.end))
  const style = blockStyle(block.node, body, outline.markers, urls)
  const cont = continuationPrefix(body, from)
  const newline = body.includes('\r\n') ? '\r\n' : '\n'
  let text = inlineToMarkdown(incoming, host, setext, style)
  if (text === '' && lead !== '') lead = ''
  text = text.split('\n').map((line, i) => i === 0 ? line : cont + line).join(newline)
  const next = body.slice(0, from) + lead + text + body.slice(to)
  const end = block.end + (next.length - body.length)
  return { body: next, start: block.start, end, changed: next !== body }
}

/** The edit as md_edit's text edit then marks; null when it would not render as the HTML or the conversion writes it better (no word kept, a new link to a defined URL). */
function editAsText (input: { body: string, block: ListedBlock, host: Paragraph | Heading, current: HastRoot, incoming: HastRoot, mdx: boolean, outline: BodyOutline, urls: Map<string, Definition>, rendersAs: (edit: BlockEditResult) => boolean }): BlockEditResult | null {
  const { body, block, mdx, rendersAs } = input
  const before = textAndMarks(input.current)
  const after = textAndMarks(input.incoming)
  const words = new Set(after.text.match(/[\p{L}\p{N}]+/gu))
  const kept = before.text.match(/[\p{L}\p{N}]+/gu)
  if (kept !== null && !kept.some(word => words.has(word))) return null
  const marks = after.marks.filter(m => !before.marks.some(b => b.type === m.type && b.href === m.href && before.text.slice(b.start, b.end) === after.text.slice(m.start, m.end)))
  if (marks.some(m => m.href !== undefined && input.urls.has(m.href))) return null
  const trimmed = withoutRemovedAtoms(body, block, input.host, input.current, input.incoming)
  if (trimmed === null) return null
  try {
    const outline = trimmed.body === body ? input.outline : undefined
    let edit = applyTextEdit({ body: trimmed.body, src: formatSourceHint(trimmed.body, block.start, trimmed.end), before: before.text, after: after.text, mdx, outline })
    if (!rendersAs(edit)) {
      if (marks.length === 0) return null
      edit = applyTextEdit({ body: edit.body, src: formatSourceHint(edit.body, edit.start, edit.end), before: after.text, after: after.text, marks, mdx, outline: edit.outline ?? undefined })
      if (!rendersAs(edit)) return null
    }
    return { body: edit.body, start: edit.start, end: edit.end, changed: edit.body !== body }
  } catch (err) {
    if (err instanceof UnmappableEditError || err instanceof SourceMismatchError || err instanceof UneditableBlockError) return null
    throw err
  }
}

const ATOMS = new Set(['image', 'imageReference', 'footnoteReference'])

/** The body without the source of the block's images and footnote references the edit removed (and a space beside each); null when they do not pair. */
function withoutRemovedAtoms (body: string, block: ListedBlock, host: Paragraph | Heading, current: HastRoot, incoming: HastRoot): { body: string, end: number } | null {
  const nodes = host.children.filter(node => ATOMS.has(node.type))
  const had = shownAtoms(shownText(current))
  const has = shownAtoms(shownText(incoming))
  if (had.length !== nodes.length) return had.length === has.length ? { body, end: block.end } : null
  let next = body
  let j = has.length
  for (let i = had.length - 1; i >= 0; i--) {
    if (has[j - 1] === had[i]) { j--; continue }
    let start = nodes[i]?.position?.start.offset ?? 0
    const end = nodes[i]?.position?.end.offset ?? 0
    if (next[start - 1] === ' ' && /[ \n]/.test(next[end] ?? ' ')) start--
    next = next.slice(0, start) + next.slice(end)
  }
  return j === 0 ? { body: next, end: block.end + next.length - body.length } : null
}

/** A fragment's text as a DOM has it and its strong, em, code and link elements as md_edit's marks. */
function textAndMarks (root: HastRoot): { text: string, marks: TextMark[] } {
  let text = ''
  const marks: TextMark[] = []
  const walk = (nodes: ElementContent[]): void => {
    for (const node of nodes) {
      if (node.type === 'text') text += node.value
      if (node.type !== 'element') continue
      if (node.tagName === 'br') text += '\n'
      // A footnote reference's number is the page's: it has no text in the source.
      if (node.tagName === 'br' || node.properties.dataFootnoteRef === true) continue
      const start = text.length
      walk(node.children)
      const type = MARKS[node.tagName]
      if (type === undefined || text.length === start) continue
      marks.push(type === 'link' ? { type, start, end: text.length, href: String(node.properties.href) } : { type, start, end: text.length })
    }
  }
  walk(root.children as ElementContent[])
  return { text, marks }
}

const MARKS: Record<string, TextMark['type']> = { strong: 'strong', em: 'em', code: 'code', a: 'link' }

/** The style for one block: its own markers first, then the document's. */
function blockStyle (block: Nodes, body: string, doc: DocumentMarkers, definitions: Map<string, Definition>): DocumentStyle {
  const own = firstMarkers(block, body, {})
  return { emphasis: own.emphasis ?? doc.emphasis ?? '*', strong: own.strong ?? doc.strong ?? '*', definitions }
}

/** The block md_block may write from `start` to `end` (never raw HTML, a definition or MDX), if there is one. */
function writableBlock (tree: Root, body: string, start: number, end: number): ListedBlock | undefined {
  return listBlocks(tree, body, start).find(b => b.end === end && b.kind !== 'html' && b.kind !== 'definition' && b.kind !== 'mdx')
}

const toHast = unified().use(remarkRehype, { allowDangerousHtml: true, clobberPrefix: '' }).freeze()

/** The block's content as the browser has it: the block alone rendered as renderMarkdown does, reduced to the inline allowlist. */
function renderedContent (block: ListedBlock, definitions: RootContent[]): HastRoot {
  const node: RootContent = block.node.type === 'listItem' ? { type: 'list', ordered: false, spread: block.looseList === true, children: [block.node] } : block.node
  const hast = toHast.runSync({ type: 'root', children: [node, ...definitions] }) as HastRoot
  let element = hast.children.find((c): c is Element => c.type === 'element')
  if (node.type === 'list') element = element?.children.find((c): c is Element => c.type === 'element')
  const content: HastRoot = { type: 'root', children: element?.children ?? [] }
  // Parsed as a browser parses the page (raw HTML becomes elements only then).
  return sanitizeInlineHtml(toHtml(sanitizeRendered(content, true)))
}

/** What continuation lines of a block's content start with: its first line's `>` kept, other prefixes as spaces. */
function continuationPrefix (body: string, offset: number): string {
  const lineStart = body.lastIndexOf('\n', offset - 1) + 1
  return body.slice(lineStart, offset).replace(/[^>\s]/g, ' ').replace(/\r/g, '')
}

/** The markers a conversion writes, and the document's link definitions by URL (the first for each) to write links as references. */
type DocumentStyle = Required<DocumentMarkers> & { definitions: Map<string, Definition> }

interface LinkKeep { title: string | null, reference?: { identifier: string, label: string, referenceType: LinkReference['referenceType'], text: string } }

/** Converts sanitized inline HTML to the Markdown content of `host` (no trailing newline); its links keep their titles and reference style. */
function inlineToMarkdown (fragment: HastRoot, host: Paragraph | Heading, setext: boolean, style: DocumentStyle): string {
  const rawTags: string[] = []
  const mdast = unified().use(rehypeRemark, { handlers: htmlHandlers(rawTags) }).runSync(fragment) as Root
  // The fragment holds only inline elements: rehype-remark makes it one paragraph (none when empty).
  const paragraph = mdast.children[0]
  const phrasing = tidy(paragraph?.type === 'paragraph' ? paragraph.children : [], host.type === 'heading')
  restoreLinks(phrasing, host.children, style)
  const intraword = hasIntrawordAttention(phrasing)
  const node: RootContent = host.type === 'heading'
    ? { type: 'heading', depth: host.depth, children: phrasing }
    : { type: 'paragraph', children: phrasing }
  const processor = unified().use(remarkGfm).use(remarkStringify, {
    // `_` cannot open or close emphasis inside a word; `*` can.
    emphasis: intraword ? '*' : style.emphasis,
    strong: intraword ? '*' : style.strong,
    setext,
    bullet: '-'
  })
  let text = processor.stringify({ type: 'root', children: [node] }).replace(/\n+$/, '')
    .replace(/\uE001(\d+)\uE002/g, (_, i: string) => rawTags[Number(i)] ?? '')
  if (host.type === 'heading') {
    text = setext
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
type Handle = NonNullable<Handlers[string]>

/** Handlers writing an element as inline HTML around its children, each tag a placeholder `\uE001<index in rawTags>\uE002` (hast-util-to-mdast cuts a paragraph at `html`). */
function htmlHandlers (rawTags: string[]): Handlers {
  const placeholder = (html: string): PhrasingContent => ({ type: 'text', value: `\uE001${rawTags.push(html) - 1}\uE002` })
  const asHtml: Handle = (state, node) => {
    const title = node.tagName === 'abbr' && typeof node.properties.title === 'string'
      ? ` title="${node.properties.title.replace(/[&<>"']/g, c => `&#${c.charCodeAt(0)};`)}"`
      : ''
    return [placeholder(`<${node.tagName}${title}>`), ...state.all(node), placeholder(`</${node.tagName}>`)] as PhrasingContent[]
  }
  // Footnote references (`sup > a[data-footnote-ref]`, the sup optional) are written as `[^label]`.
  const footnoteOr = (handle: Handle): Handle => (state, node, parent) => {
    const ref = footnoteRef(node)
    if (ref === undefined) return handle(state, node, parent)
    const label = footnoteLabel(ref)
    return { type: 'footnoteReference', identifier: label.toLowerCase(), label }
  }
  const link: Handle = (state, node) => ({ type: 'link', url: String(node.properties.href), title: null, children: state.all(node) as PhrasingContent[] })
  return { kbd: asHtml, sup: footnoteOr(asHtml), sub: asHtml, mark: asHtml, abbr: asHtml, a: footnoteOr(link) }
}

/** The footnote reference an element is (`a[data-footnote-ref]`) or holds alone in a `sup`. */
function footnoteRef (node: ElementContent): Element | undefined {
  if (node.type !== 'element') return undefined
  if (node.tagName === 'a' && node.properties.dataFootnoteRef === true) return node
  const only = node.children.filter(c => !(c.type === 'text' && c.value.trim() === ''))
  return node.tagName === 'sup' && only.length === 1 && only[0] !== undefined ? footnoteRef(only[0]) : undefined
}

/** Element keys start with this character and end with TAG_END, which text never holds. */
const TAG = '\u0001'
const TAG_END = '\u0002'

/** What a reader sees of a sanitized fragment, each element a key (tag and attributes), whitespace collapsed: equal when two show the same. */
function shownText (root: HastRoot): string {
  let out = ''
  const walk = (nodes: ElementContent[]): void => {
    for (const node of nodes) {
      if (node.type === 'text') out += node.value
      if (node.type !== 'element') continue
      if (node.tagName === 'a' && node.properties.dataFootnoteRef === true) {
        out += TAG + 'fn:' + footnoteLabel(node) + TAG_END
        continue
      }
      out += TAG + tagKey(node) + TAG_END
      if (node.tagName === 'br' || node.tagName === 'img') continue
      walk(node.children)
      out += TAG + '/' + node.tagName + TAG_END
    }
  }
  walk(root.children as ElementContent[])
  return out.replace(/[ \t\n\r\f]+/g, ' ').replace(/ ?(\u0001br\u0002) ?/g, '$1').replace(/^ | $/g, '')
}

/** The images and footnote references of a shown text, in order. */
function shownAtoms (shown: string): string[] {
  return shown.slice(0, shown.lastIndexOf('\u0002') + 1).match(/\u0001(?:img|fn:)[^\u0002]*\u0002/g) ?? []
}

function tagKey (node: Element): string {
  const props = Object.entries(node.properties).filter(([, v]) => v !== undefined && v !== null && v !== false)
    .sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
  return node.tagName + (props.length === 0 ? '' : JSON.stringify(props))
}

/** A footnote reference's label, from its href (`#user-content-fn-<label>` or `#fn-<label>`). */
function footnoteLabel (node: Element): string {
  const href = String(node.properties.href ?? '')
  const label = href.replace(/^#(?:user-content-)?fn-/, '')
  try {
    return decodeURIComponent(label)
  } catch {
    return label
  }
}
