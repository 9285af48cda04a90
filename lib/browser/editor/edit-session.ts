/**
 * One element being edited, and what a save's answer does to it: a draft saved marks it, a refused
 * save says why (a conflict locks it and shows the text that was not saved).
 */
import type { Binding } from './bindings.js'
import type { EditorUi } from './editor-ui.js'
import { hintedBlocks } from './block-hints.js'
import { freezeGeneratorMarkup } from './aligned-edit.js'
import { ownText } from './page-blocks.js'
import { unsavedBlockKey } from './unsaved-blocks.js'

/** One element being edited. */
export interface EditSession {
  el: HTMLElement
  /** A `data-cms` field, a hinted block of our rendering, or a block aligned with the source. */
  kind: 'field' | 'block' | 'aligned'
  binding: Binding
  wrapper: HTMLElement | null
  /** innerHTML when editing began (Escape restores it). */
  original: string
  /** What a save compares against: textContent (field) or innerHTML (block) at the last save. */
  baseline: string
  /** The entry's revision when editing began (fields send it as expectedRevision). */
  revision: Promise<number | undefined>
  /** The selection, kept while the focus is on the toolbar. */
  range: Range | null
  /** Where a block's unsaved text is kept in the browser (null for fields). */
  unsavedKey: string | null
  /** The block's position among its wrapper's hinted blocks. */
  index: number
  /** The entry's revision once `revision` resolved (kept with the unsaved text). */
  knownRevision: number | null
  /** An aligned block's own text when editing began (md_edit's `before`). */
  textBefore: string
  /** Makes the generator's markup in an aligned block editable again (it is frozen while edited). */
  thaw: (() => void) | null
}

/** Makes a bound element editable and opens its session. */
export function openSession (el: HTMLElement, binding: Binding, wrapper: HTMLElement | null, revision: Promise<number | undefined>): EditSession {
  const kind = wrapper === null ? 'field' : el.dataset.cmsAligned !== undefined ? 'aligned' : 'block'
  const src = el.dataset.cmsSrc
  const original = el.innerHTML
  if (kind === 'field') {
    try { el.contentEditable = 'plaintext-only' } catch { el.contentEditable = 'true' }
  } else {
    el.contentEditable = 'true'
  }
  el.classList.add('cms-active')
  el.spellcheck = true
  return {
    el,
    kind,
    binding,
    wrapper,
    original,
    baseline: kind === 'field' ? el.textContent ?? '' : original,
    revision,
    range: null,
    unsavedKey: kind !== 'field' && src !== undefined ? unsavedBlockKey(binding, src) : null,
    index: wrapper === null ? 0 : hintedBlocks(wrapper).indexOf(el),
    knownRevision: null,
    textBefore: kind === 'aligned' ? ownText(el) : '',
    thaw: kind === 'aligned' ? freezeGeneratorMarkup(el) : null
  }
}

/** Marks an element as holding a saved draft. */
export function markDraft (ui: EditorUi, el: HTMLElement, message: string): void {
  el.classList.remove('cms-conflict')
  el.classList.add('cms-draft')
  el.dataset.cmsState = 'draft'
  ui.say(message)
}

/** Says why a save was refused; a conflict (409) locks the element and shows the unsaved text. */
export function failedSave (ui: EditorUi, s: EditSession, status: number, body: Record<string, unknown> | null, text: string, conflictMessage?: string): void {
  const error = typeof body?.error === 'string' ? body.error : `HTTP ${status}`
  // The text stays in the element; the next blur retries unless the element is locked below.
  s.baseline = s.kind === 'field' ? s.el.textContent ?? '' : s.original
  if (status === 409) {
    s.el.classList.add('cms-conflict')
    s.el.dataset.cmsLocked = 'This text changed elsewhere. Reload the page to edit it; copy your text first.'
    s.el.classList.add('cms-locked')
    const rev = typeof body?.currentRevision === 'number' ? ` (now at revision ${body.currentRevision})` : ''
    ui.say('Not saved: changed elsewhere. Reload the page to continue.', 'error')
    ui.showConflict(conflictMessage ?? `This content was changed elsewhere since the page was loaded${rev}. Your text was not saved; it is kept below and in the page. Copy it, then reload the page to edit the current version.`, text)
    return
  }
  if (status === 401) { ui.say('Not saved: you are signed out. Sign in again in another tab, then edit again.', 'error'); return }
  if (status === 0) { ui.say('Not saved: the server cannot be reached.', 'error'); return }
  ui.say(`Not saved: ${error}`, 'error')
}
