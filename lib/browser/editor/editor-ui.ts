/**
 * The editor's own interface, fixed at the bottom of the viewport: a toolbar (formatting, Publish,
 * Discard), a live status line and a panel for conflicts that keeps what the editor typed.
 */

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

/** The toolbar, status line and conflict panel. */
export class EditorUi {
  readonly root: HTMLElement
  private readonly formatButtons: HTMLButtonElement[] = []
  private readonly status: HTMLElement
  private readonly panel: HTMLElement

  /**
   * Builds the interface and adds it to the page.
   * @param handlers what the buttons do
   */
  constructor (handlers: EditorUiHandlers) {
    this.root = document.createElement('div')
    this.root.className = 'cms-ui'
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

    this.panel = document.createElement('section')
    this.panel.className = 'cms-panel'
    this.panel.hidden = true
    this.panel.setAttribute('role', 'alert')

    this.root.append(this.panel, this.status, toolbar)
    document.body.appendChild(this.root)
    document.body.classList.add('cms-editing-page')
  }

  /**
   * Enables the formatting buttons while a Markdown block is being edited.
   * @param enabled whether formatting applies
   */
  setFormatting (enabled: boolean): void {
    for (const b of this.formatButtons) b.disabled = !enabled
  }

  /**
   * Shows a message in the live status line.
   * @param text the message
   * @param tone `error` for failures
   */
  say (text: string, tone: 'info' | 'error' = 'info'): void {
    this.status.textContent = text
    this.status.classList.toggle('cms-error', tone === 'error')
  }

  /**
   * Shows the conflict panel: the message, the editor's text (read-only, selectable) and the
   * choices "Copy my text", "Reload" and "Close".
   * @param message what happened, in words
   * @param text what the editor typed
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
  }

  /**
   * Is this node part of the editor's interface?
   * @param node a node or null
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
