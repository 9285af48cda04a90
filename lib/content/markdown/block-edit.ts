/**
 * `applyBlockEdit`: one edited block's inline HTML back into the Markdown body, touching nothing
 * outside the block's source range.
 */
import { toHtml } from 'hast-util-to-html'
import { visit } from 'unist-util-visit'
import type { Root as HastRoot } from 'hast'
import type { Root, RootContent, Heading, PhrasingContent, Nodes, Definition } from 'mdast'
import type {} from 'mdast-util-mdx'
import { parseSourceHint, sourceHash, type SourceHint } from './source-hint.js'
import { editableBlocks, inlineHost, type EditableBlock } from './editable-blocks.js'
import { sanitizeInlineHtml } from './inline-sanitize.js'
import { firstMarkers } from './body-outline.js'
import { inlineToMarkdown, type DocumentStyle } from './inline-to-markdown.js'
import { bodyParser, definitionsNamedIn } from './parse-body.js'
import { spliceInlineEdit } from './inline-splice.js'
import { sourceTokens, renderBlock } from './source-units.js'
import { inlineTokens, visibleTokens, sameKeys } from './inline-tokens.js'

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
  const block = findBlock(body, opts.src, tree)
  const documentDefinitions = tree.children.filter(c => c.type === 'definition' || c.type === 'footnoteDefinition')
  // Link definitions by URL (the first one for each), for writing links as references.
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
  } else if (sameRendering(incoming, renderedContent(block, definitions))) {
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
  const convert = (fragment: HastRoot): string => inlineToMarkdown(fragment, {
    kind: heading !== null ? 'heading' : 'paragraph',
    depth: heading?.depth,
    setext,
    original: host.children
  }, blockStyle(block.node, body, tree, urls, { emphasis: hasElement(fragment, 'em'), strong: hasElement(fragment, 'strong') }))
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

/** The style for one block: its own markers first, then the document's (looked up only for a kind the edit writes and the block lacks). */
function blockStyle (block: Nodes, body: string, tree: Root, definitions: Map<string, Definition>, writes: { emphasis: boolean, strong: boolean }): DocumentStyle {
  const own = firstMarkers(block, body, {})
  const needs = (writes.emphasis && own.emphasis === undefined) || (writes.strong && own.strong === undefined)
  const doc = needs ? firstMarkers(tree, body, {}) : {}
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

/** The editable block a hint names, or SourceMismatchError. */
function findBlock (body: string, src: string, tree: Root): EditableBlock {
  const hint = checkedHint(body, src)
  const block = editableBlocks(tree).find(b => b.start === hint.start && b.end === hint.end)
  if (block === undefined) throw new SourceMismatchError('The source hint does not name a block')
  return block
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

function hasElement (root: HastRoot, tagName: string): boolean {
  let found = false
  visit(root, 'element', (node) => { if (node.tagName === tagName) found = true })
  return found
}

/** The block's content as the browser has it: the block alone rendered and sanitized as renderMarkdown does. */
function renderedContent (block: EditableBlock, definitions: RootContent[]): HastRoot {
  const node = block.node
  return renderBlock(node.type === 'listItem' ? { type: 'list', ordered: false, spread: block.looseList === true, children: [node] } : node, definitions)
}

/** Two sanitized fragments render the same (whitespace collapses in HTML). */
function sameRendering (a: HastRoot, b: HastRoot): boolean {
  return normalize(a) === normalize(b)
}

function normalize (root: HastRoot): string {
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
