/**
 * One segment of a chunked rendering (see render-chunks.ts): some consecutive chunks of a body
 * rendered exactly as renderMarkdown renders them inside the whole body, and kept in a form that
 * does not depend on where they are: source hints relative to the segment and footnote numbers
 * left open, each a slot filled when the page is assembled.
 *
 * The pipeline is renderMarkdown's (remark-parse + remark-gfm, remark-rehype, the raw HTML parsed
 * by parse5 and sanitized), run on the segment's text after the definitions it may use. Where the
 * document would make a difference the segment records it instead: the footnote references it
 * makes (numbered by the page), the ids it defines and the in-page links it holds (relinked to
 * sanitized ids by the page), and whether its raw HTML leaves the HTML parser where it started.
 */
import { randomBytes } from 'node:crypto'
import { unified } from 'unified'
import remarkParse from 'remark-parse'
import remarkGfm from 'remark-gfm'
import remarkRehype, { defaultHandlers } from 'remark-rehype'
import { fromHtml } from 'hast-util-from-html'
import { toHtml } from 'hast-util-to-html'
import type { Root as HastRoot, Element, ElementContent, Nodes as HastNodes } from 'hast'
import type { Root as MdastRoot, RootContent, FootnoteReference } from 'mdast'
import type { State } from 'mdast-util-to-hast'
import { visit } from 'unist-util-visit'
import { editableBlocks } from './editable-blocks.js'
import { sourceHash } from './source-hint.js'
import { sanitizeTree, CLOBBER_PREFIX } from './render.js'

/** A place in a segment's HTML filled when the page is assembled. */
export type Slot =
  | { kind: 'hint', start: number, end: number, hash: string }
  | { kind: 'number' | 'suffix', call: number }

/** What the page needs to know of a segment, besides its HTML. */
export interface SegmentFacts {
  /** The footnote identifier (upper case) of each footnote reference, in document order. */
  calls: string[]
  /** The sanitized id (`user-content-fnref-<label>`) of each reference, before its reuse suffix. */
  callIds: string[]
  /** Other ids the HTML defines (sanitized: prefixed). */
  ids: string[]
  /** Targets of in-page links (`#x`, in document order); relinked where the page has the id. */
  fragments: string[]
  /** Whether the segment renders no node at all (it then takes no line of its own). */
  empty: boolean
  /** Whether its raw HTML leaves the HTML parser as it found it (so what follows parses alone). */
  closes: boolean
}

/** A rendered segment, independent of its place in the body. */
export interface RenderedSegment extends SegmentFacts {
  /** The HTML around the slots: `parts.length === slots.length + 1`. */
  parts: string[]
  slots: Slot[]
  /** For each of `fragments`, whether it was relinked to `#user-content-x`. */
  relinked: boolean[]
}

/** Thrown when a segment cannot be rendered apart from its document; the caller renders in full. */
export class SegmentFallback extends Error {
  /** @param reason what could not be guaranteed */
  constructor (reason: string) {
    super(reason)
    this.name = 'SegmentFallback'
  }
}

/** A segment's sanitized tree before its in-page links are settled. */
export interface SanitizedSegment extends SegmentFacts {
  /** The wrapper element whose children are the segment. */
  wrapper: Element
  hints: Array<{ start: number, end: number, hash: string }>
}

const NONCE = 'cms' + randomBytes(8).toString('hex')
const SLOT = new RegExp(`${NONCE}([hns])(\\d+)z`, 'g')
const placeholder = (kind: 'h' | 'n' | 's', index: number): string => `${NONCE}${kind}${index}z`
const parser = unified().use(remarkParse).use(remarkGfm).freeze()

/**
 * Renders a segment to its sanitized tree.
 * @param text the segment's text (consecutive chunks of the body)
 * @param definitions definition texts to parse in front of it (each standing alone)
 * @returns the tree and what the page needs to know of it
 */
export function sanitizeSegment (text: string, definitions: string[]): SanitizedSegment {
  return sanitizeParsed(parseSegmentText(text, definitions))
}

/**
 * Renders a parsed segment to its sanitized tree.
 * @param parsed the segment's parse (its nodes are changed)
 * @returns the tree and what the page needs to know of it
 */
export function sanitizeParsed (parsed: ParsedSegment): SanitizedSegment {
  const { source, own, base } = parsed

  // Source hints, as remarkCmsSource stamps them, with a slot for each.
  const hints: SanitizedSegment['hints'] = []
  for (const block of editableBlocks({ type: 'root', children: own })) {
    const node = block.node as { data?: { hName?: string, hProperties?: Record<string, unknown> } }
    const data = node.data ?? {}
    data.hProperties = { ...data.hProperties, dataCmsSrc: placeholder('h', hints.length) }
    if (block.asSpan) data.hName = 'span'
    node.data = data
    hints.push({ start: block.start - base, end: block.end - base, hash: sourceHash(source.slice(block.start, block.end)) })
  }

  const calls: string[] = []
  const footnoteReference = (state: State, node: FootnoteReference): Element => {
    const sup = defaultHandlers.footnoteReference(state, node)
    const link = sup.children[0]
    const id = String(node.identifier).toUpperCase()
    const reuse = state.footnoteCounts.get(id) ?? 1
    if (link?.type !== 'element' || typeof link.properties.id !== 'string') throw new SegmentFallback('unexpected footnote reference')
    const suffix = reuse > 1 ? `-${reuse}` : ''
    link.properties.id = link.properties.id.slice(0, link.properties.id.length - suffix.length) + placeholder('s', calls.length)
    link.children = [{ type: 'text', value: placeholder('n', calls.length) }]
    // As the HTML parser reads `data-footnote-ref` back.
    link.properties.dataFootnoteRef = ''
    calls.push(id)
    return sup
  }
  const toHast = unified().use(remarkRehype, { allowDangerousHtml: true, clobberPrefix: '', handlers: { footnoteReference } })
  const mdast: MdastRoot = { type: 'root', children: [...parsed.definitions, ...own] }
  const hast = toHast.runSync(mdast) as HastRoot
  // The footnotes section belongs to the page, rendered once after every segment.
  const last = hast.children[hast.children.length - 1]
  if (last?.type === 'element' && last.tagName === 'section' && last.properties.dataFootnotes !== undefined) hast.children.splice(-2, 2)

  const empty = hast.children.length === 0
  let raw = false
  visit(hast, 'raw', () => { raw = true })
  let closes = true
  let sanitized: HastRoot
  if (!raw && !linkInLink(hast, false) && !source.slice(base, base + parsed.length).includes('\r')) {
    // Without raw HTML, line breaks to normalize or links in links for the parser to take apart,
    // parsing the serialized tree gives the tree back: sanitize it as it is.
    sanitized = sanitizeTree({ type: 'root', children: [{ type: 'element', tagName: 'div', properties: {}, children: hast.children as ElementContent[] }] })
  } else {
    const html = toHtml(hast, { allowDangerousHtml: true })
    const tree = fromHtml('<div>' + html + '</div>', { fragment: true })
    closes = !raw || leavesParserClean(html, tree)
    sanitized = sanitizeTree(tree)
  }
  const wrapper = sanitized.children[0]
  if (sanitized.children.length !== 1 || wrapper?.type !== 'element') throw new SegmentFallback('the segment left its wrapper')
  const ids: string[] = []
  const callIds: string[] = []
  visit(wrapper, 'element', (node) => {
    const id = node.properties.id
    if (typeof id !== 'string') return
    const slot = id.lastIndexOf(NONCE)
    if (slot === -1) ids.push(id)
    else callIds[Number(id.slice(slot + NONCE.length + 1, -1))] = id.slice(0, slot)
  })
  if (callIds.length !== calls.length || [...callIds].some(c => c === undefined)) throw new SegmentFallback('a footnote reference lost its id')
  return { wrapper, calls, callIds, ids, fragments: fragmentsOf(wrapper), hints, empty, closes }
}

/** A segment's text parsed after its definition texts. */
export interface ParsedSegment {
  /** The text parsed: the definition texts, then the segment's (maybe among others). */
  source: string
  /** Where the segment's text starts in `source`, and its length. */
  base: number
  length: number
  /** The nodes of the definition texts: one definition each. */
  definitions: RootContent[]
  /** The segment's own top-level nodes (offsets into `source`). */
  own: RootContent[]
}

/**
 * Parses a segment's text after the definition texts it may use, and checks that each of those
 * parsed as one definition of its own.
 * @param text the segment's text
 * @param definitions definition texts (each standing alone)
 * @returns the parse
 */
export function parseSegmentText (text: string, definitions: string[]): ParsedSegment {
  const parsed = parseSegmentTexts([text], definitions)[0]
  if (parsed === undefined) throw new SegmentFallback('a segment did not parse alone')
  return parsed
}

/**
 * Parses several segments in one go (one parser run instead of one each: the run's set-up costs
 * about as much as a short segment), each after a blank line, after the definition texts any of
 * them may use. Each parses as alone: it starts where nothing is open and a definition it does not
 * refer to changes nothing in it.
 * @param texts the segments' texts
 * @param definitions definition texts (each standing alone)
 * @returns each segment's parse
 */
export function parseSegmentTexts (texts: string[], definitions: string[]): ParsedSegment[] {
  const prefix = definitions.length === 0 ? '' : definitions.join('\n\n') + '\n\n'
  let source = prefix
  const bases: number[] = []
  for (const text of texts) {
    // A chunk ends with the blank line before the next: added straight after it, the next one
    // follows a blank line as in the body (more blank lines may change where containers end).
    if (bases.length > 0 && !/\n[ \t]*\r?\n$/.test(source)) source += '\n\n'
    bases.push(source.length)
    source += text
  }
  const defined: RootContent[] = []
  const out: ParsedSegment[] = bases.map((base, i) => ({ source, base, length: texts[i]?.length ?? 0, definitions: defined, own: [] }))
  let i = 0
  for (const child of parser.parse(source).children) {
    const start = child.position?.start.offset ?? -1
    const end = child.position?.end.offset ?? Infinity
    if (start < prefix.length) {
      if ((child.type !== 'definition' && child.type !== 'footnoteDefinition') || end > prefix.length) {
        throw new SegmentFallback('a definition text did not parse as a definition alone')
      }
      defined.push(child)
      continue
    }
    while (i + 1 < bases.length && start >= (bases[i + 1] ?? 0)) i++
    const segment = out[i]
    const text = texts[i]
    if (segment === undefined || text === undefined || start < segment.base || end > segment.base + text.length) {
      throw new SegmentFallback('a segment did not parse within its text')
    }
    segment.own.push(child)
  }
  if (defined.length !== definitions.length) throw new SegmentFallback('a definition text did not parse as one definition')
  return out
}

/**
 * Settles the in-page links of a sanitized segment against the page's ids and serializes it.
 * @param segment the sanitized segment (its tree is changed)
 * @param pageIds every id of the page (sanitized)
 * @returns the segment as kept
 */
export function serializeSegment (segment: SanitizedSegment, pageIds: Set<string>): RenderedSegment {
  const relinked = relinkFragments(segment.wrapper, pageIds)
  const { parts, slots } = splitSlots(toHtml(segment.wrapper.children), segment)
  const { calls, callIds, ids, fragments, empty, closes } = segment
  return { parts, slots, calls, callIds, ids, fragments, relinked, empty, closes }
}

/**
 * Relinks `#x` to `#user-content-x` where the page has that id, as renderMarkdown does.
 * @param tree the tree (changed)
 * @param pageIds the page's ids
 * @returns for each in-page link (in `fragmentsOf` order), whether it was relinked
 */
export function relinkFragments (tree: HastNodes, pageIds: Set<string>): boolean[] {
  const relinked: boolean[] = []
  visit(tree, 'element', (node) => {
    const href = node.properties.href
    if (node.tagName !== 'a' || typeof href !== 'string' || !href.startsWith('#')) return
    const relink = pageIds.has(CLOBBER_PREFIX + href.slice(1))
    relinked.push(relink)
    if (relink) node.properties.href = '#' + CLOBBER_PREFIX + href.slice(1)
  })
  return relinked
}

/**
 * The in-page link targets of a segment's tree (the same order `relinkFragments` records).
 * @param tree the tree
 * @returns the targets
 */
export function fragmentsOf (tree: HastNodes): string[] {
  const out: string[] = []
  visit(tree, 'element', (node) => {
    const href = node.properties.href
    if (node.tagName === 'a' && typeof href === 'string' && href.startsWith('#')) out.push(href.slice(1))
  })
  return out
}

/** Cuts the serialized HTML at its placeholders, each of which must occur exactly once. */
function splitSlots (html: string, segment: SanitizedSegment): { parts: string[], slots: Slot[] } {
  const parts: string[] = []
  const slots: Slot[] = []
  const seen = new Set<string>()
  let last = 0
  for (const m of html.matchAll(SLOT)) {
    const kind = m[1] as 'h' | 'n' | 's'
    const index = Number(m[2])
    if (seen.has(m[0])) throw new SegmentFallback('a placeholder occurs twice')
    seen.add(m[0])
    parts.push(html.slice(last, m.index))
    last = (m.index ?? 0) + m[0].length
    if (kind === 'h') {
      const hint = segment.hints[index]
      if (hint === undefined) throw new SegmentFallback('an unknown placeholder')
      slots.push({ kind: 'hint', ...hint })
    } else {
      if (index >= segment.calls.length) throw new SegmentFallback('an unknown placeholder')
      slots.push({ kind: kind === 'n' ? 'number' : 'suffix', call: index })
    }
  }
  parts.push(html.slice(last))
  if (seen.size !== segment.hints.length + 2 * segment.calls.length) throw new SegmentFallback('a placeholder was lost')
  return { parts, slots }
}

/** Whether a link holds a link (a footnote reference or autolink in a link's text). */
function linkInLink (node: HastNodes, inLink: boolean): boolean {
  if (!('children' in node)) return false
  const link = node.type === 'element' && node.tagName === 'a'
  if (link && inLink) return true
  return node.children.some(child => linkInLink(child, inLink || link))
}

const PROBE = 'x<span>x</span><p>x</p>'

/**
 * Whether HTML leaves the HTML parser as it found it (in body, nothing open, no formatting element
 * to reopen, no comment, raw text or attribute unfinished, no form pending), so that what follows
 * parses alone exactly as after it. Tested by parsing it again with a probe after it: the probe
 * must come out as itself, at the end.
 * @param html the segment's raw HTML
 * @param tree its parse, inside `<div>`
 * @returns whether the HTML closes
 */
function leavesParserClean (html: string, tree: HastRoot): boolean {
  if (/<\/?form/i.test(html) || html.endsWith('\r')) return false
  const alone = toHtml(tree)
  const probed = toHtml(fromHtml('<div>' + html + PROBE + '</div>', { fragment: true }))
  return alone.endsWith('</div>') && probed === alone.slice(0, -'</div>'.length) + PROBE + '</div>'
}
