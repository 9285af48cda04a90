/**
 * The toolbar's and the keyboard's formatting of the block being edited: bold, italic, code, and a
 * link (its address asked in a prompt and checked). In an aligned block the element added is
 * tagged, so md_edit sends it as a mark.
 */
import { toggleInline, applyLink, isAllowedHref, rangeInside, select } from './inline-format.js'
import { MARK_ATTRIBUTE } from './aligned-edit.js'
import type { EditorUi } from './editor-ui.js'
import type { EditSession } from './edit-session.js'

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

