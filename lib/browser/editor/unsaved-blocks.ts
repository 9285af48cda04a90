/**
 * A Markdown block's unsaved text kept in localStorage, and offered back on the next visit: found by
 * its hint, else by its position when the source moved.
 */
import type { CmsApi } from './api.js'
import { parseBinding, type Binding } from './bindings.js'
import type { EditSession } from './editor.js'
import type { EditorUi, RestoreItem } from './editor-ui.js'
import { hintedBlocks, ownText } from './aligned-edit.js'
import { forgetRecord, forgetStale, keepRecord, readRecord, recordKeys, type DelayedWrite } from '../kept-records.js'

const UNSAVED_BLOCK_PREFIX = 'git-cms:unsaved-block:v2:'
const MAX_CHARS = 500_000

/** What is kept for one block. */
interface UnsavedBlock {
  /** The block's inner HTML as typed. */
  html: string
  /** The entry's revision (as this editor saw it) when typing began; null when not known. */
  revision: number | null
  /** The block's position among its wrapper's hinted blocks. */
  index: number
  /** When it was kept (ms since the epoch). */
  at: number
}

/** A kept record with the hint it was kept under. */
interface KeptBlock extends UnsavedBlock { key: string, src: string }

/** One kept text, and the block it belongs to (null when it is no longer on the page). */
interface FoundUnsaved { kept: KeptBlock, el: HTMLElement | null, wrapper: HTMLElement, binding: Binding, sourceMoved: boolean }

/** The key prefix of one wrapper's blocks: every part percent-encoded, so ids cannot collide. */
function bindingPrefix (binding: Binding): string {
  return UNSAVED_BLOCK_PREFIX + [binding.collection, binding.id, binding.path].map(encodeURIComponent).join(':') + ':'
}

/** The storage key of a block. */
export function unsavedBlockKey (binding: Binding, src: string): string {
  return bindingPrefix(binding) + encodeURIComponent(src)
}

/** Every block of one wrapper's entry and path with kept text, oldest first (expired ones are removed). */
function keptBlocks (binding: Binding): KeptBlock[] {
  const prefix = bindingPrefix(binding)
  forgetStale(prefix)
  const found: KeptBlock[] = []
  for (const key of recordKeys(prefix)) {
    const r = readRecord(key) as Partial<UnsavedBlock> | null
    if (typeof r?.html !== 'string' || typeof r.at !== 'number' || typeof r.index !== 'number') continue
    const revision = typeof r.revision === 'number' ? r.revision : null
    found.push({ html: r.html, revision, index: r.index, at: r.at, key, src: decodeURIComponent(key.slice(prefix.length)) })
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
    else keepRecord(key, { html, revision: s.knownRevision, index: s.index, at: Date.now() }, MAX_CHARS)
  })
}

/** The kept texts of the page's blocks (a text the page already shows is forgotten). */
function findUnsaved (): FoundUnsaved[] {
  const found: FoundUnsaved[] = []
  for (const wrapper of Array.from(document.querySelectorAll<HTMLElement>('[data-cms-md]'))) {
    const binding = parseBinding(wrapper.dataset.cmsMd)
    if (binding === null) continue
    const blocks = hintedBlocks(wrapper)
    for (const kept of keptBlocks(binding)) {
      const same = blocks.find(b => b.dataset.cmsSrc === kept.src) ?? null
      if (same !== null && same.innerHTML === kept.html) { forgetRecord(kept.key); continue }
      found.push({ kept, el: same ?? blocks[kept.index] ?? null, wrapper, binding, sourceMoved: same === null })
    }
  }
  return found
}

/** How the restore dialog tells each kept text: what moved since, and the text now on the page. */
async function restoreItems (api: CmsApi, found: FoundUnsaved[]): Promise<RestoreItem[]> {
  const revisions = new Map<string, number | undefined>()
  for (const f of found) {
    const entry = `${f.binding.collection}/${f.binding.id}`
    if (!revisions.has(entry)) revisions.set(entry, (await api.readEntry(f.binding.collection, f.binding.id))?.revision)
  }
  return found.map(f => {
    const now = revisions.get(`${f.binding.collection}/${f.binding.id}`)
    const notes: string[] = []
    const revisionMoved = f.kept.revision !== null && now !== undefined && now !== f.kept.revision
    if (revisionMoved) notes.push(`The entry changed since you typed this (revision ${f.kept.revision ?? '?'} then, ${now} now).`)
    if (f.sourceMoved) {
      notes.push(f.el === null
        ? 'This block is no longer on the page: Restore cannot put the text back. Copy it from here.'
        : 'The text of this block changed since you typed this: Restore replaces what the page shows now.')
    }
    return {
      title: `Block ${f.kept.index + 1} of ${f.binding.collection}/${f.binding.id}`,
      notes,
      mine: textOf(f.kept.html),
      now: (revisionMoved || f.sourceMoved) && f.el !== null ? textOf(f.el.innerHTML) : null
    }
  })
}

/**
 * Offers back the unsaved text this browser kept for the page's blocks. Restore puts each text in
 * its block and hands `save` a session as if the editor had just left it (a successful save
 * forgets the kept text); Discard forgets them all.
 */
export async function offerUnsaved (api: CmsApi, ui: EditorUi, save: (s: EditSession) => void): Promise<void> {
  const found = findUnsaved()
  if (found.length === 0) return
  const items = await restoreItems(api, found)
  ui.say(`This browser kept unsaved text of ${found.length} ${found.length === 1 ? 'block' : 'blocks'} on this page: restore it or discard it.`)
  ui.offerRestore(items, () => {
    for (const f of found) {
      if (f.el === null || !f.el.isConnected || f.el.dataset.cmsLocked !== undefined) continue
      const original = f.el.innerHTML
      const aligned = f.el.dataset.cmsAligned !== undefined
      const textBefore = aligned ? ownText(f.el) : ''
      f.el.innerHTML = f.kept.html
      save({ el: f.el, kind: aligned ? 'aligned' : 'block', binding: f.binding, wrapper: f.wrapper, original, baseline: original, revision: Promise.resolve(undefined), range: null, unsavedKey: f.kept.key, index: f.kept.index, knownRevision: null, textBefore, thaw: null })
    }
  }, () => {
    for (const f of found) forgetRecord(f.kept.key)
    ui.say('Unsaved text discarded.')
  })
}

/** The text of kept HTML, parsed in an inert document (nothing in it runs or loads). */
function textOf (html: string): string {
  return new DOMParser().parseFromString(html, 'text/html').body.textContent ?? ''
}
