/**
 * The inline editor's unsaved text of a Markdown block, kept in localStorage while the editor types
 * so that a crashed or closed tab loses nothing. A record belongs to one entry, block path and
 * `data-cms-src` hint (which names the block's source bytes and their hash): after a reload it is
 * offered back only where a block with the same hint still exists.
 */
import type { Binding } from './bindings.js'

/** The prefix of every key this module writes. */
export const UNSAVED_BLOCK_PREFIX = 'git-cms:unsaved-block:v1:'
const MAX_CHARS = 500_000
const MAX_AGE_MS = 30 * 24 * 3600 * 1000

/** What is stored for one block. */
export interface UnsavedBlock { html: string, at: number }

/** @returns the browser's localStorage, or null where it is disabled */
function storage (): Storage | null {
  try { return window.localStorage } catch { return null }
}

/**
 * The storage key of a block: every part percent-encoded, so ids with `/`, `:`, spaces or
 * apostrophes cannot collide.
 * @param binding the wrapper's binding (entry and block path)
 * @param src the block's `data-cms-src` hint
 * @returns the key
 */
export function unsavedBlockKey (binding: Binding, src: string): string {
  return UNSAVED_BLOCK_PREFIX + [binding.collection, binding.id, binding.path, src].map(encodeURIComponent).join(':')
}

/**
 * Reads a block's unsaved text.
 * @param key the block's key
 * @returns the record, or null
 */
export function readUnsavedBlock (key: string): UnsavedBlock | null {
  try {
    const raw = storage()?.getItem(key) ?? null
    if (raw === null) return null
    const r = JSON.parse(raw) as Partial<UnsavedBlock>
    if (typeof r?.html !== 'string' || typeof r.at !== 'number') return null
    if (Date.now() - r.at > MAX_AGE_MS) { clearUnsavedBlock(key); return null }
    return { html: r.html, at: r.at }
  } catch { return null }
}

/**
 * Keeps a block's unsaved text.
 * @param key the block's key
 * @param html the block's inner HTML as typed
 * @returns false when the browser would not keep it
 */
export function writeUnsavedBlock (key: string, html: string): boolean {
  try {
    const raw = JSON.stringify({ html, at: Date.now() })
    if (raw.length > MAX_CHARS) return false
    const store = storage()
    if (store === null) return false
    store.setItem(key, raw)
    return true
  } catch { return false }
}

/**
 * Forgets a block's unsaved text.
 * @param key the block's key
 */
export function clearUnsavedBlock (key: string): void {
  try { storage()?.removeItem(key) } catch {}
}
