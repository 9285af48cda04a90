/**
 * A Markdown block's unsaved text, kept in localStorage while the editor types so a closed tab loses
 * nothing; a record names entry, block path and hint, and keeps the revision and text typing began
 * from, so a reopened page can tell whether either moved.
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

/** The storage key of a block. */
export function unsavedBlockKey (binding: Binding, src: string): string {
  return bindingPrefix(binding) + encodeURIComponent(src)
}

/**
 * Every block of one wrapper's entry and path with kept text, oldest first.
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

/** Forgets a block's unsaved text. */
export function clearUnsavedBlock (key: string): void {
  try { storage()?.removeItem(key) } catch {}
}
