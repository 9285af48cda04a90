/**
 * A Markdown block's unsaved text kept in localStorage, and offered back on the next visit: found by
 * its hint, else by its position when the source moved.
 */
import type { Api } from '../studio/api.js'
import { parseBinding, type Binding } from './bindings.js'
import type { EditSession } from './editor.js'
import type { EditorUi, RestoreItem } from './editor-ui.js'
import { hintedBlocks, ownText } from './aligned-edit.js'
import { KeptRecords } from '../kept-records.js'

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

/** Each block's kept text, under the key of its entry, block path and hint: at most 500,000 characters of JSON, written 250 ms after typing stops. */
export const unsavedBlocks = new KeptRecords<UnsavedBlock>('git-cms:unsaved-block:v2:', 500_000, 250, r =>
  typeof r.html === 'string' && typeof r.at === 'number' && typeof r.index === 'number' && (typeof r.revision === 'number' || r.revision === null))

/** One kept text under its key, and the block it belongs to (null when it is no longer on the page). */
interface FoundUnsaved { kept: UnsavedBlock, key: string, el: HTMLElement | null, wrapper: HTMLElement, binding: Binding, sourceMoved: boolean }

/** Keeps the text of a session's block a short pause after typing (or forgets it when it is back to the original). */
export function keepBlockText (s: EditSession | null): void {
  if (s === null || s.unsavedKey === null) return
  const key = s.unsavedKey
  unsavedBlocks.later(() => {
    const html = s.el.innerHTML
    unsavedBlocks.keep(key, html === s.original ? null : { html, revision: s.knownRevision, index: s.index, at: Date.now() })
  })
}

/** The kept texts of the page's blocks (a text the page already shows is forgotten). */
function findUnsaved (): FoundUnsaved[] {
  const found: FoundUnsaved[] = []
  for (const wrapper of Array.from(document.querySelectorAll<HTMLElement>('[data-cms-md]'))) {
    const binding = parseBinding(wrapper.dataset.cmsMd)
    if (binding === null) continue
    const blocks = hintedBlocks(wrapper)
    const { collection, id, path } = binding
    // The kept texts of this wrapper's entry and path, oldest first; the key ends with the block's hint.
    for (const { key, record: kept } of unsavedBlocks.fresh(collection, id, path)) {
      const src = decodeURIComponent(key.slice(unsavedBlocks.key(collection, id, path, '').length))
      const same = blocks.find(b => b.dataset.cmsSrc === src) ?? null
      if (same !== null && same.innerHTML === kept.html) { unsavedBlocks.forget(key); continue }
      found.push({ kept, key, el: same ?? blocks[kept.index] ?? null, wrapper, binding, sourceMoved: same === null })
    }
  }
  return found
}

/** How the restore dialog tells each kept text: what moved since, and the text now on the page. */
async function restoreItems (api: Api, found: FoundUnsaved[]): Promise<RestoreItem[]> {
  const revisions = new Map<string, number | undefined>()
  for (const f of found) {
    const entry = `${f.binding.collection}/${f.binding.id}`
    if (!revisions.has(entry)) revisions.set(entry, (await api.entry(f.binding.collection, f.binding.id).catch(() => null))?.revision)
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
export async function offerUnsaved (api: Api, ui: EditorUi, save: (s: EditSession) => void): Promise<void> {
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
      save({ el: f.el, kind: aligned ? 'aligned' : 'block', binding: f.binding, wrapper: f.wrapper, original, baseline: original, revision: Promise.resolve(undefined), range: null, unsavedKey: f.key, index: f.kept.index, knownRevision: null, textBefore, thaw: null })
    }
  }, () => {
    for (const f of found) unsavedBlocks.forget(f.key)
    ui.say('Unsaved text discarded.')
  })
}

/** The text of kept HTML, parsed in an inert document (nothing in it runs or loads). */
function textOf (html: string): string {
  return new DOMParser().parseFromString(html, 'text/html').body.textContent ?? ''
}
