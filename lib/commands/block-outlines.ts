/**
 * The outlines of the bodies the in-place editor lists and edits, kept per instance by the body's
 * format and digest (a draft and the published body never mix); md_edit stores the edited body's
 * outline for the next edit. Kept because outlining a 20 KB body takes ~25 ms of CPU (1 MB: ~1 s).
 */
import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { BodyOutline } from '../content/markdown/body-outline.js'
import type { BoundedRenderer } from './bounded-render.js'

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

/**
 * A body's outline: the kept one, else parsed in a render thread (never on the event loop) and kept.
 * @param services the instance's outline cache and render threads
 * @param body the body
 * @param mdx whether it is parsed as MDX
 * @returns the outline; rejects with RenderRefusedError (422) when the parse is too slow or too large
 */
export async function bodyOutline (services: { blockOutlines: BlockOutlineCache, markdown: BoundedRenderer }, body: string, mdx: boolean): Promise<BodyOutline> {
  const key = outlineKey(body, mdx)
  const known = services.blockOutlines.get(key)
  if (known !== undefined) return known
  const outline = await services.markdown.outline(body, mdx)
  services.blockOutlines.set(key, outline)
  return outline
}
