/**
 * A Markdown block's unsaved text, kept in localStorage while the editor types so a closed tab loses
 * nothing; a record names entry, block path and hint, and keeps the revision and text typing began
 * from, so a reopened page can tell whether either moved.
 */
import type { Binding } from './bindings.js'
import type { EditSession } from './edit-session.js'
import { forgetRecord, forgetStale, keepRecord, readRecord, recordKeys, type DelayedWrite } from '../kept-records.js'

/** The prefix of every key this module writes. */
const UNSAVED_BLOCK_PREFIX = 'git-cms:unsaved-block:v2:'
const MAX_CHARS = 500_000

/** What is kept for one block. */
interface UnsavedBlock {
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

/** The key prefix of one wrapper's blocks: every part percent-encoded, so ids cannot collide. */
function bindingPrefix (binding: Binding): string {
  return UNSAVED_BLOCK_PREFIX + [binding.collection, binding.id, binding.path].map(encodeURIComponent).join(':') + ':'
}

/** The storage key of a block. */
export function unsavedBlockKey (binding: Binding, src: string): string {
  return bindingPrefix(binding) + encodeURIComponent(src)
}

/** Every block of one wrapper's entry and path with kept text, oldest first (expired ones are removed). */
export function keptBlocks (binding: Binding): KeptBlock[] {
  const prefix = bindingPrefix(binding)
  forgetStale(prefix)
  const found: KeptBlock[] = []
  for (const key of recordKeys(prefix)) {
    const r = readRecord(key) as Partial<UnsavedBlock> | null
    if (typeof r?.html !== 'string' || typeof r.original !== 'string' || typeof r.at !== 'number' || typeof r.index !== 'number') continue
    const revision = typeof r.revision === 'number' ? r.revision : null
    found.push({ html: r.html, original: r.original, revision, index: r.index, at: r.at, key, src: decodeURIComponent(key.slice(prefix.length)) })
  }
  return found.sort((a, b) => a.at - b.at)
}

/** Keeps the text of a session's block a short pause after typing (or forgets it when it is back to the original). */
export function keepBlockText (keeper: DelayedWrite, s: EditSession | null): void {
  if (s === null || s.unsavedKey === null) return
  const key = s.unsavedKey
  keeper.schedule(() => {
    const html = s.el.innerHTML
    if (html === s.original) forgetRecord(key)
    else keepRecord(key, { html, original: s.original, revision: s.knownRevision, index: s.index, at: Date.now() }, MAX_CHARS)
  })
}

/** Forgets a block's unsaved text. */
export function clearUnsavedBlock (key: string): void {
  forgetRecord(key)
}
