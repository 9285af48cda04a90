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
import { createHash } from 'node:crypto'
import { toHtml } from 'hast-util-to-html'
import { fromHtml } from 'hast-util-from-html'
import { bodyChunks } from './body-chunks.js'
import { bodyParser, type BodyParser } from './parse-body.js'
import { chunkDefinitions, definitionsUsable, type ChunkDefinition } from './chunk-definitions.js'
import { markdownTooDeep } from './nesting-limit.js'
import { renderMarkdown, sanitizeTree, CLOBBER_PREFIX, type RenderMarkdownOptions } from './render.js'
import { sanitizeSegment, serializeSegment, SegmentFallback, type RenderedSegment, type SanitizedSegment } from './render-segment.js'
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
  let parse: BodyParser | undefined
  // The body's definitions, first of each label only (the first definition wins).
  const first = new Map<string, ChunkDefinition>()
  const footnoteChunks: string[] = []
  for (const text of texts) {
    if (!text.includes(']:')) continue
    const key = 'd' + digest(text)
    let entry = cache.get(key)
    if (entry?.kind !== 'definitions') {
      parse ??= bodyParser()
      entry = { kind: 'definitions', definitions: chunkDefinitions(text, parse) }
      cache.set(key, entry)
    }
    if (entry.definitions === null) throw new SegmentFallback('a definition is not at the top level')
    for (const d of entry.definitions) if (!first.has(d.key)) first.set(d.key, d)
    if (entry.definitions.some(d => d.kind === 'footnoteDefinition')) footnoteChunks.push(text)
  }
  const definitions = [...first.values()]
  const usable = texts.map(text => definitionsUsable(text, definitions))

  // Segments: from each chunk, as few chunks as leave the HTML parser as they found it.
  const segments: Segment[] = []
  let rendered = 0
  for (let i = 0; i < chunks.length;) {
    for (let j = i; ; j++) {
      const used = new Set(usable.slice(i, j + 1).flat())
      const stubs = definitions.filter(d => used.has(d)).map(d => d.stub)
      const start = chunks[i]?.start ?? 0
      const text = body.slice(start, chunks[j]?.end ?? body.length)
      const key = 's' + digest(stubs.join('\u0000') + '\u0001' + text)
      const hit = cache.get(key)
      const segment: Segment = { start, text, definitions: stubs, key }
      if (hit?.kind === 'segment') segment.kept = hit.segment
      else { segment.fresh = sanitizeSegment(text, stubs); rendered++ }
      const closes = (segment.kept ?? segment.fresh)?.closes ?? false
      if (!closes && segment.fresh !== undefined && j + 1 < chunks.length) {
        // Keep the open one (its next look-up finds it and goes on to the longer segment).
        cache.set(key, { kind: 'segment', segment: serializeSegment(segment.fresh, new Set()) })
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
  return createHash('sha256').update(text).digest('base64')
}
