/**
 * One element being edited: its formatting (bold, italic, code, a checked link; tagged in an aligned
 * block so md_edit sends it as a mark) and what a save's answer does to it.
 */
import type { Binding } from './bindings.js'
import type { EditorUi } from './editor-ui.js'
import { hintedBlocks } from './block-hints.js'
import { freezeGeneratorMarkup, MARK_ATTRIBUTE } from './aligned-edit.js'
import { toggleInline, applyLink, isAllowedHref, rangeInside, select } from './inline-format.js'
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

/** A formatting the toolbar or a shortcut applies. */
export type FormatCommand = 'bold' | 'italic' | 'code' | 'link'

/** What formatting needs of the editor. */
export interface FormatHost {
  ui: EditorUi
  /** A dialog (the link prompt) opens or closes: the focus it takes is not the editor leaving the text. */
  prompting: (on: boolean) => void
  /** Keeps the block's text in the browser (it changed). */
  keep: () => void
}

/** Applies a formatting to the selection of a block being edited. */
export function formatBlock (s: EditSession, cmd: FormatCommand, host: FormatHost): void {
  if (document.activeElement !== s.el) {
    s.el.focus()
    if (s.range !== null) select(s.range)
  }
  if (cmd === 'link') {
    const range = rangeInside(s.el)?.cloneRange() ?? null
    host.prompting(true)
    let href: string | null
    try {
      href = window.prompt('Link address (https://…, mailto:… or a path on this site)', 'https://')
    } finally {
      host.prompting(false)
    }
    if (href === null) return
    if (!isAllowedHref(href.trim()) || href.trim() === 'https://') {
      host.ui.say('Link not added: use an http(s) or mailto address, or a path on this site.', 'error')
      return
    }
    s.el.focus()
    if (range !== null) select(range)
    if (applyLink(s.el, href.trim())) markAdded(s)
    host.keep()
    return
  }
  if (toggleInline(s.el, cmd === 'bold' ? 'strong' : cmd === 'italic' ? 'em' : 'code')) markAdded(s)
  host.keep()
}

/** In an aligned block, tags the element the toolbar just added (selected), so md_edit sends it. */
function markAdded (s: EditSession): void {
  const added = rangeInside(s.el)?.startContainer
  if (s.kind === 'aligned' && added instanceof HTMLElement && added !== s.el && /^(?:STRONG|EM|CODE|A)$/.test(added.tagName)) added.setAttribute(MARK_ATTRIBUTE, '')
}
