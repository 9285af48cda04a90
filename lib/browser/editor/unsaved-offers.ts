/**
 * The unsaved text this browser kept for the page's blocks (unsaved-blocks.ts), found again: by its
 * hint, or (when the block's source moved) by its position, with the entry's revision compared with
 * the one typing began from, told as the restore dialog shows it.
 */
import type { CmsApi } from './api.js'
import { parseBinding, type Binding } from './bindings.js'
import { hintedBlocks } from './block-hints.js'
import type { RestoreItem } from './editor-ui.js'
import { clearUnsavedBlock, keptBlocks, type KeptBlock } from './unsaved-blocks.js'

/** One kept text, and the block it belongs to (null when it is no longer on the page). */
export interface FoundUnsaved { kept: KeptBlock, el: HTMLElement | null, wrapper: HTMLElement, binding: Binding, sourceMoved: boolean }

/**
 * The kept texts of the page's blocks (a text the page already shows is forgotten).
 * @returns the texts and how the dialog tells each, or null when there are none
 */
export async function unsavedOffers (api: CmsApi): Promise<{ found: FoundUnsaved[], items: RestoreItem[] } | null> {
  const found: FoundUnsaved[] = []
  for (const wrapper of Array.from(document.querySelectorAll<HTMLElement>('[data-cms-md]'))) {
    const binding = parseBinding(wrapper.dataset.cmsMd)
    if (binding === null) continue
    const blocks = hintedBlocks(wrapper)
    for (const kept of keptBlocks(binding)) {
      const same = blocks.find(b => b.dataset.cmsSrc === kept.src) ?? null
      if (same !== null && same.innerHTML === kept.html) { clearUnsavedBlock(kept.key); continue }
      found.push({ kept, el: same ?? blocks[kept.index] ?? null, wrapper, binding, sourceMoved: same === null })
    }
  }
  if (found.length === 0) return null
  const revisions = new Map<string, number | undefined>()
  for (const f of found) {
    const entry = `${f.binding.collection}/${f.binding.id}`
    if (!revisions.has(entry)) revisions.set(entry, (await api.readEntry(f.binding.collection, f.binding.id))?.revision)
  }
  const items: RestoreItem[] = found.map(f => {
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
  return { found, items }
}

/** The text of kept HTML, parsed in an inert document (nothing in it runs or loads). */
function textOf (html: string): string {
  return new DOMParser().parseFromString(html, 'text/html').body.textContent ?? ''
}

