/**
 * Keeps the text of the block being edited in the browser (unsaved-blocks.ts) a short pause after
 * typing, so a crash or a closed tab loses nothing; one keeper per editor.
 */
import { clearUnsavedBlock, writeUnsavedBlock } from './unsaved-blocks.js'
import type { EditSession } from './edit-session.js'

/** The pending (debounced) write of the current block's unsaved text. */
export class UnsavedKeeper {
  private timer: number | undefined
  private pending: (() => void) | null = null

  /** Keeps the block's text after a short pause in typing. */
  keep (s: EditSession | null): void {
    if (s === null || s.unsavedKey === null) return
    const key = s.unsavedKey
    this.pending = () => {
      const html = s.el.innerHTML
      if (html === s.original) clearUnsavedBlock(key)
      else writeUnsavedBlock(key, { html, original: s.original, revision: s.knownRevision, index: s.index, at: Date.now() })
    }
    window.clearTimeout(this.timer)
    this.timer = window.setTimeout(() => { this.flush() }, 250)
  }

  /** Writes the pending text now. */
  flush (): void {
    window.clearTimeout(this.timer)
    const write = this.pending
    this.pending = null
    write?.()
  }

  /** Forgets the pending text (the edit was cancelled). */
  drop (): void {
    this.pending = null
  }
}
