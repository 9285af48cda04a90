/**
 * `renderMarkdownChunked`: renderMarkdown's output, byte for byte, assembled from cached renderings
 * of the body's top-level chunks (see body-chunks.ts), so that after a save that changed one
 * block only that block's chunk is rendered again.
 *
 * Each chunk parses alone as inside the body once it is preceded by the definitions it may use
 * (chunk-definitions.ts). Consecutive chunks form a segment, rendered and sanitized as one piece
 * (render-segment.ts); usually a segment is one chunk, but raw HTML that leaves an element open
 * (`<details>` ... `</details>` across blank lines) makes the chunks up to the close one segment,
 * since the browser's parser reads them together. A segment is cached by its text and its
 * definitions, with its source hints relative to itself and its footnote numbers left open; the
 * page numbers the footnote references in document order, renders the footnotes section
 * (render-footnotes.ts), relinks in-page links to the sanitized ids and fills in the hints.
 * Whenever a piece cannot be rendered apart from its document, the whole body is rendered instead.
 */
import { hash } from 'node:crypto'
import { toHtml } from 'hast-util-to-html'
import { fromHtml } from 'hast-util-from-html'
import { bodyChunks } from './body-chunks.js'
import { chunkDefinitions, definitionsUsable, type ChunkDefinition } from './chunk-definitions.js'
import { markdownTooDeep } from './nesting-limit.js'
import { renderMarkdown, sanitizeTree, CLOBBER_PREFIX, type RenderMarkdownOptions } from './render.js'
import {
  sanitizeSegment, sanitizeParsed, parseSegmentTexts, serializeSegment, SegmentFallback,
  type RenderedSegment, type SanitizedSegment, type ParsedSegment
} from './render-segment.js'
import { sanitizeFootnotes, serializeFootnotes, type RenderedFootnotes } from './render-footnotes.js'
import type { ChunkCache } from './chunk-cache.js'

/** What renderMarkdownChunked did, for tests and benchmarks. */
export interface ChunkedRender {
  html: string
  /** Segments rendered (not found in the cache). */
  rendered: number
  /** Segments of the page. */
  segments: number
  /** Why the whole body was rendered instead, if it was. */
  fallback?: string
}

/** Chunks one segment may grow to while its raw HTML stays open, before the body renders whole. */
const MAX_SEGMENT_CHUNKS = 24

/**
 * Renders a body as renderMarkdown does (same HTML), reusing the cached renderings of its chunks.
 * @param body the Markdown body, exactly as stored
 * @param opts the entry and field (`allowDangerousHtml` renders the whole body, uncached)
 * @param cache the cache to use and fill
 * @returns the HTML and what was rendered
 */
export function renderMarkdownChunked (body: string, opts: RenderMarkdownOptions, cache: ChunkCache): ChunkedRender {
  const whole = (fallback: string): ChunkedRender => ({ html: renderMarkdown(body, opts), rendered: 1, segments: 1, fallback })
  if (opts.allowDangerousHtml === true) return whole('trusted HTML')
  if (markdownTooDeep(body)) return whole('nested too deep')
  // The parser drops a byte order mark at the start of a document (and counts offsets without it):
  // only the body's first chunk parsed first would be read as in the body.
  if (body.startsWith('\uFEFF')) return whole('byte order mark')
  try {
    return assemble(body, opts, cache)
  } catch (err) {
    if (err instanceof SegmentFallback) return whole(err.message)
    throw err
  }
}

interface Segment {
  start: number
  text: string
  definitions: string[]
  key: string
  kept?: RenderedSegment
  fresh?: SanitizedSegment
}

function assemble (body: string, opts: RenderMarkdownOptions, cache: ChunkCache): ChunkedRender {
  const chunks = bodyChunks(body)
  const texts = chunks.map(c => body.slice(c.start, c.end))
  const textKeys = texts.map(digest)
  // The body's definitions, first of each label only (the first definition wins), from the
  // chunks that contain `]:` (every definition does); those not cached are parsed in one go.
  const scans = new Map<number, ChunkDefinition[] | null>()
  const unscanned: number[] = []
  texts.forEach((text, i) => {
    if (!text.includes(']:')) return
    const hit = cache.get('d' + (textKeys[i] ?? ''))
    if (hit?.kind === 'definitions') scans.set(i, hit.definitions)
    else unscanned.push(i)
  })
  if (unscanned.length > 0) {
    parseSegmentTexts(unscanned.map(i => texts[i] ?? ''), []).forEach((parsed, k) => {
      const i = unscanned[k] ?? -1
      const definitions = chunkDefinitions(parsed.own, parsed.source)
      scans.set(i, definitions)
      cache.set('d' + (textKeys[i] ?? ''), { kind: 'definitions', definitions })
    })
  }
  const first = new Map<string, ChunkDefinition>()
  const footnoteChunks: string[] = []
  for (const [i, found] of [...scans].sort((a, b) => a[0] - b[0])) {
    if (found === null) throw new SegmentFallback('a definition is not at the top level')
    for (const d of found) if (!first.has(d.key)) first.set(d.key, d)
    if (found.some(d => d.kind === 'footnoteDefinition')) footnoteChunks.push(texts[i] ?? '')
  }
  const definitions = [...first.values()]
  // Which definitions each chunk may use: found by a scan of the chunk, kept by chunk and
  // definitions (a body usually keeps its definitions from one save to the next).
  const definitionKeys = definitions.map(d => digest(d.stub))
  const definitionsKey = digest(definitionKeys.join(''))
  const usable = texts.map((text, i): ChunkDefinition[] => {
    if (definitions.length === 0 || !text.includes('[')) return []
    const key = 'u' + definitionsKey + (textKeys[i] ?? '')
    const hit = cache.get(key)
    if (hit?.kind === 'usable') return hit.indices.map(k => definitions[k] as ChunkDefinition)
    const found = definitionsUsable(text, definitions)
    cache.set(key, { kind: 'usable', indices: found.map(d => definitions.indexOf(d)) })
    return found
  })

  // The chunks not in the cache as segments of their own are parsed in one go (a body seen for
  // the first time is parsed once, not once per chunk). A segment is kept by its text and the
  // definitions it is parsed after.
  const keyOf = (used: ChunkDefinition[], textKey: string): string =>
    's' + digest(textKey + '\u0001' + used.map(d => definitionKeys[definitions.indexOf(d)] ?? '').join(''))
  const singles = texts.map((_, i) => keyOf(usable[i] ?? [], textKeys[i] ?? ''))
  const missing = singles.flatMap((key, i) => cache.get(key)?.kind === 'segment' ? [] : [i])
  const preparsed = new Map<number, ParsedSegment>()
  if (missing.length > 1) {
    const used = new Set(missing.flatMap(i => usable[i] ?? []))
    const stubs = definitions.filter(d => used.has(d)).map(d => d.stub)
    parseSegmentTexts(missing.map(i => texts[i] ?? ''), stubs).forEach((parsed, k) => preparsed.set(missing[k] ?? -1, parsed))
  }

  // Segments: from each chunk, the chunks up to one that leaves the HTML parser as it found it.
  // Tried with 1, 2, 4, 8 ... chunks (a segment need not be the shortest, only end where nothing
  // is open), so raw HTML left open costs a few renders, not one per chunk it spans.
  const segments: Segment[] = []
  let rendered = 0
  for (let i = 0; i < chunks.length;) {
    for (let j = i; ; j = Math.min(chunks.length - 1, i + MAX_SEGMENT_CHUNKS - 1, 2 * j - i + 1)) {
      const used = new Set(usable.slice(i, j + 1).flat())
      const defs = i === j ? usable[i] ?? [] : definitions.filter(d => used.has(d))
      const stubs = defs.map(d => d.stub)
      const start = chunks[i]?.start ?? 0
      const text = i === j ? texts[i] ?? '' : body.slice(start, chunks[j]?.end ?? body.length)
      const key = i === j ? singles[i] ?? '' : keyOf(defs, textKeys.slice(i, j + 1).join(''))
      const hit = cache.get(key)
      const segment: Segment = { start, text, definitions: stubs, key }
      const pre = i === j ? preparsed.get(i) : undefined
      let closes = false
      if (hit?.kind === 'segment') {
        segment.kept = hit.segment
        closes = hit.segment.closes
      } else if (hit?.kind !== 'open' || j + 1 === chunks.length) {
        segment.fresh = pre !== undefined ? sanitizeParsed(pre) : sanitizeSegment(text, stubs)
        closes = segment.fresh.closes
        rendered++
        // Keep an open one as such: its next look-up goes straight on to the longer segment.
        if (!closes && j + 1 < chunks.length) cache.set(key, { kind: 'open' })
      }
      if (closes || j + 1 === chunks.length) {
        segments.push(segment)
        i = j + 1
        break
      }
      if (j - i + 1 >= MAX_SEGMENT_CHUNKS) throw new SegmentFallback('raw HTML stays open too long')
    }
  }

  // Footnote references, numbered in document order as remark-rehype numbers them.
  const order: string[] = []
  const counts = new Map<string, number>()
  const numbers: number[][] = []
  const reuses: number[][] = []
  const pageIds = new Set<string>()
  for (const segment of segments) {
    const facts = (segment.kept ?? segment.fresh) as RenderedSegment | SanitizedSegment
    for (const id of facts.ids) pageIds.add(id)
    const n: number[] = []
    const r: number[] = []
    facts.calls.forEach((id, k) => {
      const reuse = (counts.get(id) ?? 0) + 1
      if (reuse === 1) order.push(id)
      counts.set(id, reuse)
      n.push(order.indexOf(id) + 1)
      r.push(reuse)
      pageIds.add((facts.callIds[k] ?? '') + (reuse > 1 ? `-${reuse}` : ''))
    })
    numbers.push(n)
    reuses.push(r)
  }

  // The footnotes section, after the last segment (whose HTML must then have closed).
  let footnotes: RenderedFootnotes | undefined
  let footnotesFresh: ReturnType<typeof sanitizeFootnotes> | undefined
  let footnotesKey = ''
  let footnoteStubs: string[] = []
  if (order.length > 0) {
    const last = segments[segments.length - 1]
    if (!((last?.kept ?? last?.fresh)?.closes ?? false)) throw new SegmentFallback('raw HTML open before the footnotes')
    const used = new Set(footnoteChunks.flatMap(text => definitionsUsable(text, definitions)))
    footnoteStubs = definitions.filter(d => used.has(d) && d.kind === 'definition').map(d => d.stub)
    footnotesKey = 'f' + digest(JSON.stringify([order, [...counts], footnoteStubs, footnoteChunks]))
    const hit = cache.get(footnotesKey)
    if (hit?.kind === 'footnotes') footnotes = hit.footnotes
    else { footnotesFresh = sanitizeFootnotes(footnoteChunks, footnoteStubs, order, counts); rendered++ }
    for (const id of (footnotes ?? footnotesFresh)?.ids ?? []) pageIds.add(id)
  }

  // In-page links follow the page's ids: a kept piece whose links would now resolve otherwise
  // is rendered again.
  const relinks = (kept: { fragments: string[], relinked: boolean[] }): boolean =>
    kept.fragments.some((f, k) => pageIds.has(CLOBBER_PREFIX + f) !== kept.relinked[k])
  for (const segment of segments) {
    if (segment.kept !== undefined && relinks(segment.kept)) {
      segment.fresh = sanitizeSegment(segment.text, segment.definitions)
      rendered++
    }
    if (segment.fresh !== undefined) {
      segment.kept = serializeSegment(segment.fresh, pageIds)
      cache.set(segment.key, { kind: 'segment', segment: segment.kept })
    }
  }
  if (footnotes !== undefined && relinks(footnotes)) {
    footnotesFresh = sanitizeFootnotes(footnoteChunks, footnoteStubs, order, counts)
    footnotes = undefined
    rendered++
  }
  if (footnotesFresh !== undefined) {
    footnotes = serializeFootnotes(footnotesFresh, pageIds)
    cache.set(footnotesKey, { kind: 'footnotes', footnotes })
  }

  let html = ''
  let blocks = 0
  segments.forEach((segment, s) => {
    const kept = segment.kept as RenderedSegment
    if (kept.empty) return
    if (blocks++ > 0) html += '\n'
    html += kept.parts[0] ?? ''
    kept.slots.forEach((slot, k) => {
      if (slot.kind === 'hint') html += `${segment.start + slot.start}:${segment.start + slot.end}:${slot.hash}`
      else if (slot.kind === 'number') html += String(numbers[s]?.[slot.call] ?? 0)
      else {
        const reuse = reuses[s]?.[slot.call] ?? 1
        html += reuse > 1 ? `-${reuse}` : ''
      }
      html += kept.parts[k + 1] ?? ''
    })
  })
  const [open, close] = wrapper(opts)
  return { html: open + html + (footnotes?.html ?? '') + close, rendered, segments: segments.length }
}

/** The wrapper renderMarkdown puts around the blocks, as it comes out of the sanitizer. */
function wrapper (opts: RenderMarkdownOptions): [string, string] {
  const name = `${opts.collection}/${opts.id}#${opts.blockPath ?? 'body'}`
  const raw = toHtml({ type: 'element', tagName: 'div', properties: { dataCmsMd: name }, children: [] })
  const html = toHtml(sanitizeTree(fromHtml(raw, { fragment: true })))
  if (!html.endsWith('></div>')) throw new SegmentFallback('unexpected wrapper')
  return [html.slice(0, -'</div>'.length), '</div>']
}

function digest (text: string): string {
  return hash('sha256', text, 'base64')
}
