/**
 * The editor's interface at the bottom of the viewport: toolbar, live status line, conflict panel
 * and the restore offer after a crash. Until editing starts it covers nothing, so a signed-in page
 * looks as signed out.
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

/** The commands the toolbar buttons send. */
export type ToolbarCommand = 'bold' | 'italic' | 'code' | 'link' | 'publish' | 'discard'

/** Callbacks of the interface. */
export interface EditorUiHandlers {
  command: (cmd: ToolbarCommand) => void
}

const FORMAT_BUTTONS: Array<{ cmd: ToolbarCommand, label: string, text: string, keys: string }> = [
  { cmd: 'bold', label: 'Bold', text: 'B', keys: 'Control+B' },
  { cmd: 'italic', label: 'Italic', text: 'I', keys: 'Control+I' },
  { cmd: 'code', label: 'Code', text: '</>', keys: 'Control+E' },
  { cmd: 'link', label: 'Link', text: 'Link', keys: 'Control+K' }
]

function button (text: string, label: string, cls: string): HTMLButtonElement {
  const b = document.createElement('button')
  b.type = 'button'
  b.className = cls
  b.textContent = text
  if (label !== text) b.setAttribute('aria-label', label)
  b.title = label
  return b
}

/** A labelled read-only text area. */
function readOnlyText (id: string, label: string, text: string): HTMLElement {
  const wrap = document.createElement('div')
  const l = document.createElement('label')
  l.htmlFor = id
  l.textContent = label
  const area = document.createElement('textarea')
  area.id = id
  area.readOnly = true
  area.rows = Math.min(6, Math.max(2, Math.ceil(text.length / 60)))
  area.value = text
  wrap.append(l, area)
  return wrap
}

/** The toolbar, status line and conflict panel. */
export class EditorUi {
  readonly root: HTMLElement
  private readonly formatButtons: HTMLButtonElement[] = []
  private readonly status: HTMLElement
  private readonly panel: HTMLElement
  private readonly offer: HTMLElement

  /** Builds the interface and adds it to the page. */
  constructor (handlers: EditorUiHandlers) {
    this.root = document.createElement('div')
    this.root.className = 'cms-ui cms-idle'
    const toolbar = document.createElement('div')
    toolbar.className = 'cms-toolbar'
    toolbar.setAttribute('role', 'toolbar')
    toolbar.setAttribute('aria-label', 'Inline editor')
    const format = document.createElement('div')
    format.className = 'cms-group'
    for (const f of FORMAT_BUTTONS) {
      const b = button(f.text, f.label, `cms-btn cms-${f.cmd}`)
      b.setAttribute('aria-keyshortcuts', f.keys)
      b.title = `${f.label} (${f.keys.replace('Control', 'Ctrl')})`
      b.disabled = true
      // Keep the focus (and the selection) in the text being edited when clicked with a mouse.
      b.addEventListener('mousedown', (e) => { e.preventDefault() })
      b.addEventListener('click', () => { handlers.command(f.cmd) })
      this.formatButtons.push(b)
      format.appendChild(b)
    }
    const actions = document.createElement('div')
    actions.className = 'cms-group'
    const publish = button('Publish', 'Publish', 'cms-btn cms-primary')
    publish.addEventListener('click', () => { handlers.command('publish') })
    const discard = button('Discard', 'Discard', 'cms-btn')
    discard.addEventListener('click', () => { handlers.command('discard') })
    actions.append(publish, discard)
    toolbar.append(format, actions)
    toolbar.addEventListener('keydown', (e) => { this.moveFocus(toolbar, e) })

    this.status = document.createElement('p')
    this.status.className = 'cms-status'
    this.status.setAttribute('role', 'status')
    this.status.setAttribute('aria-live', 'polite')
    this.status.tabIndex = -1

    this.panel = document.createElement('section')
    this.panel.className = 'cms-panel'
    this.panel.hidden = true
    this.panel.setAttribute('role', 'alert')

    this.offer = document.createElement('section')
    this.offer.className = 'cms-panel cms-offer'
    this.offer.hidden = true
    this.offer.setAttribute('aria-labelledby', 'cms-offer-title')

    this.root.append(this.offer, this.panel, this.status, toolbar)
    document.body.appendChild(this.root)
  }

  /** Shows the toolbar and the status line (once editing starts; they stay from then on). */
  activate (): void {
    this.root.classList.remove('cms-idle')
    document.body.classList.add('cms-editing-page')
  }

  /** Moves the focus to the status line (after a save, so the outcome is read out). */
  focusStatus (): void {
    this.activate()
    this.status.focus()
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

  /**
   * Shows the conflict panel: the message, the editor's text (read-only, selectable) and the
   * choices "Copy my text", "Reload" and "Close".
   */
  showConflict (message: string, text: string): void {
    this.panel.replaceChildren()
    const h = document.createElement('h2')
    h.textContent = 'Not saved: changed elsewhere'
    const p = document.createElement('p')
    p.textContent = message
    const area = document.createElement('textarea')
    area.readOnly = true
    area.value = text
    area.rows = 4
    area.setAttribute('aria-label', 'Your text')
    const copy = button('Copy my text', 'Copy my text', 'cms-btn')
    copy.addEventListener('click', () => {
      area.select()
      const done = (): void => { copy.textContent = 'Copied' }
      if (navigator.clipboard !== undefined) navigator.clipboard.writeText(text).then(done, () => { document.execCommand('copy'); done() })
      else { document.execCommand('copy'); done() }
    })
    const reload = button('Reload', 'Reload', 'cms-btn cms-primary')
    reload.addEventListener('click', () => { location.reload() })
    const close = button('Close', 'Close', 'cms-btn')
    close.addEventListener('click', () => { this.panel.hidden = true })
    const row = document.createElement('div')
    row.className = 'cms-group'
    row.append(copy, reload, close)
    this.panel.append(h, p, area, row)
    this.panel.hidden = false
    this.activate()
  }

  /** Shows each block's unsaved text with "Restore unsaved changes" and "Discard"; the page waits. */
  offerRestore (items: RestoreItem[], restore: () => void, discard: () => void): void {
    this.offer.replaceChildren()
    const h = document.createElement('h2')
    h.id = 'cms-offer-title'
    h.textContent = 'Unsaved changes'
    const p = document.createElement('p')
    p.textContent = `This browser kept text you typed in ${items.length === 1 ? 'a block' : `${items.length} blocks`} of this page and did not save. Restore it (saved as a draft) or discard it.`
    this.offer.append(h, p)
    for (const [i, item] of items.entries()) {
      const box = document.createElement('div')
      box.className = 'cms-offer-item'
      const t = document.createElement('h3')
      t.textContent = item.title
      box.append(t)
      for (const note of item.notes) {
        const n = document.createElement('p')
        n.className = 'cms-moved'
        n.textContent = note
        box.append(n)
      }
      box.append(readOnlyText(`cms-offer-mine-${i}`, 'Your unsaved text', item.mine))
      if (item.now !== null) box.append(readOnlyText(`cms-offer-now-${i}`, 'Now on the page', item.now))
      this.offer.append(box)
    }
    const yes = button('Restore unsaved changes', 'Restore unsaved changes', 'cms-btn cms-primary')
    const no = button('Discard', 'Discard unsaved changes', 'cms-btn')
    const close = (): void => { this.offer.hidden = true; this.offer.replaceChildren() }
    yes.addEventListener('click', () => { close(); restore() })
    no.addEventListener('click', () => { close(); discard() })
    const row = document.createElement('div')
    row.className = 'cms-group'
    row.append(yes, no)
    this.offer.append(row)
    this.offer.hidden = false
    this.activate()
  }

  /**
   * Is this node part of the editor's interface?
   * @returns true when inside the interface
   */
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
