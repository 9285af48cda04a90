/**
 * The inline editor's unsaved text of a Markdown block, kept in localStorage while the editor types
 * so that a crashed or closed tab loses nothing. A record belongs to one entry, block path and
 * `data-cms-src` hint (the block's source range and hash), and remembers the entry's revision
 * and the block's text when typing began, so that a reopened page can say whether either moved.
 */
import type { Binding } from './bindings.js'

/** The prefix of every key this module writes. */
export const UNSAVED_BLOCK_PREFIX = 'git-cms:unsaved-block:v2:'
const MAX_CHARS = 500_000
const MAX_AGE_MS = 30 * 24 * 3600 * 1000

/** What is kept for one block. */
export interface UnsavedBlock {
  /** The block's inner HTML as typed. */
  html: string
  /** The block's inner HTML when typing began. */
  original: string
  /** The entry's revision (as this editor saw it) when typing began; null when not known. */
  revision: number | null
  /** The block's position among its wrapper's hinted blocks. */
  index: number
  /** When it was kept (ms since the epoch). */
  at: number
}

/** A kept record with the hint it was kept under. */
export interface KeptBlock extends UnsavedBlock { key: string, src: string }

/** @returns the browser's localStorage, or null where it is disabled */
function storage (): Storage | null {
  try { return window.localStorage } catch { return null }
}

/** The key prefix of one wrapper's blocks: every part percent-encoded, so ids cannot collide. */
function bindingPrefix (binding: Binding): string {
  return UNSAVED_BLOCK_PREFIX + [binding.collection, binding.id, binding.path].map(encodeURIComponent).join(':') + ':'
}

/**
 * The storage key of a block.
 * @param binding the wrapper's binding (entry and block path)
 * @param src the block's `data-cms-src` hint
 * @returns the key
 */
export function unsavedBlockKey (binding: Binding, src: string): string {
  return bindingPrefix(binding) + encodeURIComponent(src)
}

/**
 * Every block of one wrapper's entry and path with kept text, oldest first.
 * @param binding the wrapper's binding
 * @returns the records (expired or malformed ones are removed)
 */
export function keptBlocks (binding: Binding): KeptBlock[] {
  const store = storage()
  if (store === null) return []
  const prefix = bindingPrefix(binding)
  const found: KeptBlock[] = []
  try {
    for (let i = 0; i < store.length; i++) {
      const key = store.key(i)
      if (key === null || !key.startsWith(prefix)) continue
      const record = parse(store.getItem(key))
      if (record === null || Date.now() - record.at > MAX_AGE_MS) continue
      found.push({ ...record, key, src: decodeURIComponent(key.slice(prefix.length)) })
    }
  } catch { return [] }
  return found.sort((a, b) => a.at - b.at)
}

function parse (raw: string | null): UnsavedBlock | null {
  if (raw === null) return null
  try {
    const r = JSON.parse(raw) as Partial<UnsavedBlock> | null
    if (typeof r?.html !== 'string' || typeof r.original !== 'string' || typeof r.at !== 'number' || typeof r.index !== 'number') return null
    return { html: r.html, original: r.original, revision: typeof r.revision === 'number' ? r.revision : null, index: r.index, at: r.at }
  } catch { return null }
}

/**
 * Keeps a block's unsaved text.
 * @param key the block's key
 * @param record what to keep
 * @returns false when the browser would not keep it
 */
export function writeUnsavedBlock (key: string, record: UnsavedBlock): boolean {
  try {
    const raw = JSON.stringify(record)
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
