/**
 * The outlines of the bodies the in-place editor lists and edits (body-outline.ts), kept by one
 * service instance and keyed by the body itself (its format and digest), so a draft and the
 * published body never mix. `GET /blocks` stores the outline it parsed; md_edit finds it and parses
 * only the edited block's top-level node, then stores the new body's outline for the next edit.
 * Kept because one whole parse misses the target: a 20 KB body takes ~65 ms to parse on the bench
 * machine (target 30 ms for the list and an edit); an edit with the outline takes a few ms.
 */
import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { BodyOutline } from '../content/markdown/body-outline.js'

/** Outlines by body; owned by one service instance. */
export type BlockOutlineCache = LRUCache<string, BodyOutline>

/** What the cache holds at most, in characters of block text and hints (about 16 MB in UTF-16). */
const CACHE_CHARS = 8 * 1024 * 1024

/**
 * An empty cache for one service instance.
 * @returns the cache
 */
export function createBlockOutlineCache (): BlockOutlineCache {
  return new LRUCache<string, BodyOutline>({
    maxSize: CACHE_CHARS,
    sizeCalculation: outline => outline.blocks.reduce((n, b) => n + b.text.length + b.src.length + 64, 64 + 32 * outline.tops.length)
  })
}

/**
 * The key of a body's outline.
 * @param body the body
 * @param mdx whether it is parsed as MDX
 * @returns the key
 */
export function outlineKey (body: string, mdx: boolean): string {
  return `${mdx ? 'mdx' : 'md'}:${createHash('sha256').update(body).digest('base64')}`
}
