/**
 * What a chunked rendering keeps between requests (see render-chunks.ts): the definitions of a
 * chunk, rendered segments and footnotes sections, by content digest. Light on purpose (types and
 * a weight, no Markdown toolchain), so a service can create its cache before the toolchain loads.
 */
import type { ChunkDefinition } from './chunk-definitions.js'
import type { RenderedSegment } from './render-segment.js'
import type { RenderedFootnotes } from './render-footnotes.js'

/** One kept piece. */
export type ChunkCacheEntry =
  | { kind: 'definitions', definitions: ChunkDefinition[] | null }
  /** The definitions (indices into the body's) a chunk may use. */
  | { kind: 'usable', indices: number[] }
  | { kind: 'segment', segment: RenderedSegment }
  /** A segment whose raw HTML leaves an element open: the page reads it with the chunks after. */
  | { kind: 'open' }
  | { kind: 'footnotes', footnotes: RenderedFootnotes }

/** The store renderMarkdownChunked reads and fills (an LRU bounded by `chunkEntryWeight`). */
export interface ChunkCache {
  get: (key: string) => ChunkCacheEntry | undefined
  set: (key: string, value: ChunkCacheEntry) => void
}

/**
 * The weight of an entry: about the characters it holds.
 * @param entry the entry
 * @returns its weight
 */
export function chunkEntryWeight (entry: ChunkCacheEntry): number {
  if (entry.kind === 'definitions') return 64 + (entry.definitions?.reduce((n, d) => n + d.stub.length + d.key.length, 0) ?? 0)
  if (entry.kind === 'open') return 64
  if (entry.kind === 'usable') return 64 + 8 * entry.indices.length
  if (entry.kind === 'footnotes') return 64 + entry.footnotes.html.length
  return 64 + entry.segment.parts.reduce((n, p) => n + p.length, 0) + 16 * entry.segment.slots.length
}
