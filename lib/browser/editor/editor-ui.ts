/**
 * The editor's interface at the bottom of the viewport (toolbar, status line, conflict panel, restore
 * offer); until editing starts it covers nothing, so a signed-in page looks as signed out.
 */

/** One block's kept text as the restore offer shows it. */
export interface RestoreItem {
  /** Which block, in words. */
  title: string
  /** What moved since the text was typed (the entry's revision, the block's source), in words. */
  notes: string[]
  /** The unsaved text. */
  mine: string
  /** The block's text on the page now, shown beside it when something moved; null: not shown. */
  now: string | null
}

/** The toolbar's formatting: its button, its key with Ctrl, the element it adds and the mark md_edit sends for it. */
export const FORMATS = [
  { cmd: 'bold', label: 'Bold', text: 'B', key: 'B', tag: 'strong', mark: 'strong' },
  { cmd: 'italic', label: 'Italic', text: 'I', key: 'I', tag: 'em', mark: 'em' },
  { cmd: 'code', label: 'Code', text: '</>', key: 'E', tag: 'code', mark: 'code' },
  { cmd: 'link', label: 'Link', text: 'Link', key: 'K', tag: 'a', mark: 'link' }
] as const

/** An element with its attributes (set as attributes, not properties) and children. */
function h<K extends keyof HTMLElementTagNameMap> (tag: K, attributes: Record<string, string> = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) el.setAttribute(name, value)
  el.append(...children)
  return el
}

/** A button; `label` is its accessible name when the text alone does not say it. */
function button (text: string, cls: string, onClick: () => void, label = text): HTMLButtonElement {
  const b = h('button', { type: 'button', class: cls, title: label, ...(label !== text ? { 'aria-label': label } : {}) }, text)
  b.addEventListener('click', onClick)
  return b
}

/** A labelled read-only text area. */
function readOnlyText (id: string, label: string, text: string): HTMLElement {
  const area = h('textarea', { id, readonly: '', rows: String(Math.min(6, Math.max(2, Math.ceil(text.length / 60)))) })
  area.value = text
  return h('div', {}, h('label', { for: id }, label), area)
}

/** The toolbar, status line and conflict panel. */
export class EditorUi {
  readonly root: HTMLElement
  private readonly formatButtons: HTMLButtonElement[]
  /** The live status line (focused after a Ctrl+S save, so the outcome is read out). */
  readonly status = h('p', { class: 'cms-status', role: 'status', 'aria-live': 'polite', tabindex: '-1' })
  private readonly panel = h('section', { class: 'cms-panel', role: 'alert', hidden: '' })
  private readonly offer = h('section', { class: 'cms-panel cms-offer', 'aria-labelledby': 'cms-offer-title', hidden: '' })

  /** Builds the interface and adds it to the page. */
  constructor (handlers: { format: (f: typeof FORMATS[number]) => void, publish: () => void, discard: () => void }) {
    this.formatButtons = FORMATS.map(f => {
      const b = button(f.text, `cms-btn cms-${f.cmd}`, () => { handlers.format(f) }, f.label)
      b.setAttribute('aria-keyshortcuts', `Control+${f.key}`)
      b.title = `${f.label} (Ctrl+${f.key})`
      b.disabled = true
      // Keep the focus (and the selection) in the text being edited when clicked with a mouse.
      b.addEventListener('mousedown', (e) => { e.preventDefault() })
      return b
    })
    const toolbar = h('div', { class: 'cms-toolbar', role: 'toolbar', 'aria-label': 'Inline editor' },
      h('div', { class: 'cms-group' }, ...this.formatButtons),
      h('div', { class: 'cms-group' },
        button('Publish', 'cms-btn cms-primary', handlers.publish),
        button('Discard', 'cms-btn', handlers.discard)))
    toolbar.addEventListener('keydown', (e) => { this.moveFocus(toolbar, e) })
    this.root = h('div', { class: 'cms-ui cms-idle' }, this.offer, this.panel, this.status, toolbar)
    document.body.appendChild(this.root)
  }

  /** Shows the toolbar and the status line (once editing starts; they stay from then on). */
  activate (): void {
    this.root.classList.remove('cms-idle')
    document.body.classList.add('cms-editing-page')
  }

  /** Enables the formatting buttons while a Markdown block is being edited. */
  setFormatting (enabled: boolean): void {
    for (const b of this.formatButtons) b.disabled = !enabled
  }

  /** Shows a message in the live status line. */
  say (text: string, tone: 'info' | 'error' = 'info'): void {
    this.status.textContent = text
    this.status.classList.toggle('cms-error', tone === 'error')
  }

  /** Shows the conflict panel: the message, the editor's text (read-only) and Copy my text, Reload, Close. */
  showConflict (message: string, text: string): void {
    const area = h('textarea', { readonly: '', rows: '4', 'aria-label': 'Your text' })
    area.value = text
    const copy = button('Copy my text', 'cms-btn', () => {
      area.select()
      const done = (): void => { copy.textContent = 'Copied' }
      if (navigator.clipboard !== undefined) navigator.clipboard.writeText(text).then(done, () => { document.execCommand('copy'); done() })
      else { document.execCommand('copy'); done() }
    })
    this.panel.replaceChildren(h('h2', {}, 'Not saved: changed elsewhere'), h('p', {}, message), area,
      h('div', { class: 'cms-group' }, copy,
        button('Reload', 'cms-btn cms-primary', () => { location.reload() }),
        button('Close', 'cms-btn', () => { this.panel.hidden = true })))
    this.panel.hidden = false
    this.activate()
  }

  /** Shows each block's unsaved text with "Restore unsaved changes" and "Discard"; the page waits. */
  offerRestore (items: RestoreItem[], restore: () => void, discard: () => void): void {
    const close = (): void => { this.offer.hidden = true; this.offer.replaceChildren() }
    this.offer.replaceChildren(
      h('h2', { id: 'cms-offer-title' }, 'Unsaved changes'),
      h('p', {}, `This browser kept text you typed in ${items.length === 1 ? 'a block' : `${items.length} blocks`} of this page and did not save. Restore it (saved as a draft) or discard it.`),
      ...items.map((item, i) => h('div', { class: 'cms-offer-item' },
        h('h3', {}, item.title),
        ...item.notes.map(note => h('p', { class: 'cms-moved' }, note)),
        readOnlyText(`cms-offer-mine-${i}`, 'Your unsaved text', item.mine),
        ...(item.now !== null ? [readOnlyText(`cms-offer-now-${i}`, 'Now on the page', item.now)] : []))),
      h('div', { class: 'cms-group' },
        button('Restore unsaved changes', 'cms-btn cms-primary', () => { close(); restore() }),
        button('Discard', 'cms-btn', () => { close(); discard() }, 'Discard unsaved changes')))
    this.offer.hidden = false
    this.activate()
  }

  /** Whether a node is part of the editor's interface. */
  contains (node: Node | null): boolean {
    return node !== null && this.root.contains(node)
  }

  // Arrow keys move between toolbar buttons (the ARIA toolbar pattern); Tab works as well.
  private moveFocus (toolbar: HTMLElement, e: KeyboardEvent): void {
    if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return
    const buttons = Array.from(toolbar.querySelectorAll<HTMLButtonElement>('button:not(:disabled)'))
    const i = buttons.indexOf(document.activeElement as HTMLButtonElement)
    if (i < 0) return
    e.preventDefault()
    buttons[(i + (e.key === 'ArrowRight' ? 1 : buttons.length - 1)) % buttons.length]?.focus()
  }
}
