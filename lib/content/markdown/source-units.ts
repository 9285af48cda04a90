/**
 * A block's rendered tokens traced to their source bytes (for inline-splice.ts): text tokens each to
 * their own range; emphasis, strong, strikethrough and links as `open`, children and `close` units;
 * anything else is an `atom`. The block is rendered once, a marker character between units.
 */
import { unified } from 'unified'
import remarkRehype from 'remark-rehype'
import { toHtml } from 'hast-util-to-html'
import { fromHtml } from 'hast-util-from-html'
import type { Root as HastRoot, Element } from 'hast'
import type { PhrasingContent, RootContent } from 'mdast'
import { inlineTokens, visibleTokens, type InlineToken } from './inline-tokens.js'
import { sanitizeInlineHtml } from './inline-sanitize.js'
import { sanitizeRendered } from './render.js'

/** A rendered token of the block with the source range it came from. */
export interface SourceToken extends InlineToken {
  kind: 'text' | 'open' | 'close' | 'atom'
  /** Its unit's index, in document order. */
  unit: number
  /** The index of the block's child it belongs to. */
  top: number
  start: number
  end: number
}

interface Unit { kind: SourceToken['kind'], start: number, end: number, top: number, text?: string, extents?: TextExtents }

/** Splits rendered text into units; never in a body (checked), a private-use character. */
const MARK = '\uE000'

const CONTAINERS = new Set(['emphasis', 'strong', 'delete', 'link', 'linkReference'])

const toHast = unified().use(remarkRehype, { allowDangerousHtml: true, clobberPrefix: '' }).freeze()

/**
 * Renders a block alone as the page has it, reduced to the inline allowlist as an edit's HTML is.
 * @param node the block (a list item inside its list)
 * @param definitions the link and footnote definitions (for references)
 * @returns the sanitized content of its element (of the list's item)
 */
export function renderBlock (node: RootContent, definitions: RootContent[]): HastRoot {
  const hast = toHast.runSync({ type: 'root', children: [node, ...definitions] }) as HastRoot
  let element = hast.children.find((c): c is Element => c.type === 'element')
  if (node.type === 'list') element = element?.children.find((c): c is Element => c.type === 'element')
  const content: HastRoot = { type: 'root', children: element?.children ?? [] }
  // Parsed as a browser parses the page (raw HTML becomes elements only then).
  return sanitizeInlineHtml(toHtml(sanitizeRendered(content, true)))
}

/**
 * The block's rendered tokens traced to the source, or null when they cannot all be traced.
 * @param children the block's phrasing content (positions in body offsets)
 * @param body the body
 * @param definitions the document's definitions (to render references)
 * @returns the tokens, whitespace merged and ends trimmed as in visibleTokens
 */
export function sourceTokens (children: PhrasingContent[], body: string, definitions: RootContent[]): SourceToken[] | null {
  if (body.includes(MARK)) return null
  const units: Unit[] = []
  const marked = markUnits(children, body, units, null)
  if (marked === null) return null
  const lists = inlineTokens(renderBlock({ type: 'paragraph', children: marked }, definitions), MARK)
  if (lists.length !== units.length + 2 || (lists[0]?.length ?? 0) > 0 || (lists[lists.length - 1]?.length ?? 0) > 0) return null
  const out: SourceToken[] = []
  for (const [i, unit] of units.entries()) {
    const tokens = lists[i + 1] ?? []
    if (unit.kind !== 'text') {
      for (const token of tokens) out.push({ ...token, kind: unit.kind, unit: i, top: unit.top, start: unit.start, end: unit.end })
      continue
    }
    const traced = traceText(tokens, unit, i)
    if (traced === null) return null
    out.push(...traced)
  }
  return visibleTokens(out)
}

/** The content with a marker before every unit and after every child list, the units recorded (null: a node has no position). */
function markUnits (nodes: PhrasingContent[], body: string, units: Unit[], top: number | null): PhrasingContent[] | null {
  const out: PhrasingContent[] = []
  const groups = groupNodes(nodes)
  for (const [gi, group] of groups.entries()) {
    const t = top ?? gi
    const first = group[0]
    const last = group[group.length - 1]
    const start = first?.position?.start.offset
    const end = last?.position?.end.offset
    if (first === undefined || start === undefined || end === undefined) return null
    out.push({ type: 'text', value: MARK })
    if (group.length === 1 && first.type === 'text') {
      const text = trimLines(first.value)
      const extents = textExtents(text, body, start, end)
      if (extents !== null) {
        units.push({ kind: 'text', start, end, top: t, text, extents })
        out.push(first)
        continue
      }
    } else if (group.length === 1 && isContainer(first)) {
      const kids = (first as { children: PhrasingContent[] }).children
      const open = kids[0]?.position?.start.offset
      const close = kids[kids.length - 1]?.position?.end.offset
      if (open !== undefined && close !== undefined) {
        units.push({ kind: 'open', start, end: open, top: t })
        const inner = markUnits(kids, body, units, t)
        if (inner === null) return null
        units.push({ kind: 'close', start: close, end, top: t })
        out.push({ ...first, children: inner } as PhrasingContent)
        continue
      }
    }
    units.push({ kind: 'atom', start, end, top: t })
    out.push(...group)
  }
  out.push({ type: 'text', value: MARK })
  return out
}

function isContainer (node: PhrasingContent): boolean {
  if (!CONTAINERS.has(node.type) || !('children' in node) || node.children.length === 0) return false
  return node.type !== 'linkReference' || node.referenceType === 'full'
}

/** A child list in groups: each node alone, raw HTML from an opening tag to its closing tag together. */
function groupNodes (nodes: PhrasingContent[]): PhrasingContent[][] {
  const groups: PhrasingContent[][] = []
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i] as PhrasingContent
    const open = node.type === 'html' ? /^<([A-Za-z][A-Za-z0-9-]*)(?:\s[^>]*)?>$/.exec(node.value) : null
    const name = open?.[1]?.toLowerCase()
    const close = name === undefined ? -1 : closingIndex(nodes, i, name)
    if (close === -1) { groups.push([node]); continue }
    groups.push(nodes.slice(i, close + 1))
    i = close
  }
  return groups
}

function closingIndex (nodes: PhrasingContent[], from: number, name: string): number {
  let depth = 0
  for (let j = from; j < nodes.length; j++) {
    const node = nodes[j]
    if (node?.type !== 'html') continue
    const tag = /^<(\/?)([A-Za-z][A-Za-z0-9-]*)/.exec(node.value)
    if (tag?.[2]?.toLowerCase() !== name || /\/>$/.test(node.value)) continue
    depth += tag[1] === '/' ? -1 : 1
    if (depth === 0) return j
  }
  return -1
}

/** Text as mdast-util-to-hast renders it: spaces and tabs around line endings removed. */
function trimLines (value: string): string {
  return value.replace(/[ \t]*(\r?\n|\r)[ \t]*/g, '$1')
}

/** Decodes one character reference (`&copy;`, `&#169;`) as the HTML parser does. */
function decodeEntity (reference: string): string {
  const node = fromHtml(reference, { fragment: true }).children[0]
  return node?.type === 'text' ? node.value : reference
}

const ENTITY = /^&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{0,31});/
const PUNCTUATION = /^[!-/:-@[-`{-~]$/

/** Where each character of a text node's value is in the source (see textExtents). */
interface TextExtents {
  /** The source offset each character starts at. */
  starts: number[]
  /** The source offset each character's own source ends at (a whole escape or reference). */
  ends: number[]
  /** Where the value's source ends. */
  end: number
}

/**
 * Where each character of a text node's value is in the source (an escape or reference: its whole source).
 * @param value the text node's value
 * @param body the body
 * @param start the node's start offset
 * @param end the node's end offset
 * @returns the extents, or null when the value does not follow from the source
 */
export function textExtents (value: string, body: string, start: number, end: number): TextExtents | null {
  const starts: number[] = []
  const ends: number[] = []
  let k = start
  let i = 0
  let lineStart = false
  while (i < value.length) {
    if (k >= end) return null
    const c = value[i] as string
    const s = body[k] as string
    if (s === '\\' && body[k + 1] === c && PUNCTUATION.test(c)) {
      starts.push(k); ends.push(k + 2); i++; k += 2; lineStart = false
      continue
    }
    if (s === '&') {
      const ref = ENTITY.exec(body.slice(k, Math.min(end, k + 40)))?.[0]
      const decoded = ref === undefined ? undefined : decodeEntity(ref)
      if (ref !== undefined && decoded !== undefined && decoded !== '' && decoded !== ref && value.startsWith(decoded, i)) {
        for (let n = 0; n < decoded.length; n++) { starts.push(k); ends.push(k + ref.length) }
        i += decoded.length; k += ref.length; lineStart = false
        continue
      }
    }
    if (s === c && !(lineStart && s === '>')) {
      starts.push(k); ends.push(k + 1); i++; k++
      lineStart = c === '\n'
      continue
    }
    if (s === ' ' || s === '\t' || s === '\r' || (lineStart && s === '>')) { k++; continue }
    return null
  }
  return { starts, ends, end: k }
}

/** The unit's tokens with the source range of each. */
function traceText (tokens: InlineToken[], unit: Unit, index: number): SourceToken[] | null {
  const text = unit.text ?? ''
  const starts = unit.extents?.starts ?? []
  const out: SourceToken[] = []
  let i = 0
  for (const token of tokens) {
    const length = token.key === ' ' ? (/^[ \t\n\r\f]+/.exec(text.slice(i))?.[0].length ?? 0) : token.key.length
    if (length === 0 || (token.key !== ' ' && text.slice(i, i + length) !== token.key)) return null
    const start = starts[i]
    const end = i + length === starts.length ? unit.extents?.end : starts[i + length]
    if (start === undefined || end === undefined) return null
    out.push({ ...token, kind: 'text', unit: index, top: unit.top, start, end })
    i += length
  }
  return i === text.length ? out : null
}
