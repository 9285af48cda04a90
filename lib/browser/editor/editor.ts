/**
 * The inline editor (loaded by bootstrap.js): bound elements and hinted Markdown blocks become editable;
 * blur or Ctrl+S saves (`save_field`, `md_block`, `md_edit`), Escape cancels.
 */
import { parseBinding, type Binding } from './bindings.js'
import { parseSourceHint, type SourceBlock, type SourceHint } from '../../api-shapes.js'
import { formatInline, insertPlainText, rangeInside, select } from './inline-format.js'
import { isAllowedHref } from '../../url-scheme.js'
import { EditorUi, FORMATS } from './editor-ui.js'
import { markAligned, textAndMarks, placeCaret, freezeGeneratorMarkup, hintedBlocks, ownText, MARK_ATTRIBUTE } from './aligned-edit.js'
import { keepBlockText, offerUnsaved, unsavedBlocks } from './unsaved-blocks.js'
import { Api, ApiError } from '../studio/api.js'

const TARGETS = '[data-cms], [data-cms-md] [data-cms-src]'

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

/** The inline editor of one page. */
class InlineEditor {
  private readonly api: Api
  private readonly ui: EditorUi
  private session: EditSession | null = null
  /** Saves run one after another, so each block save sees the body the previous one left. */
  private queue: Promise<void> = Promise.resolve()
  /** A dialog (the link prompt) is open: the focus it takes is not the editor leaving the text. */
  private prompting = false
  /** Wrappers of our rendering that show the published text of an entry drafted earlier (its rendering failed), until a save. */
  private readonly showPublished = new WeakSet<HTMLElement>()

  /** Sets up the page: makes bound elements focusable and adds the toolbar. */
  constructor (apiBase: string) {
    this.api = new Api(apiBase)
    this.ui = new EditorUi({ format: (f) => { this.format(f) }, publish: () => { void this.publish() }, discard: () => { void this.discard() } })
    document.addEventListener('click', (e) => { this.onClick(e) }, true)
    document.addEventListener('focusin', (e) => { this.onFocusIn(e) })
    document.addEventListener('focusout', (e) => { this.onFocusOut(e) })
    document.addEventListener('keydown', (e) => { this.onKeyDown(e) }, true)
    document.addEventListener('paste', (e) => { this.onPaste(e) }, true)
    document.addEventListener('drop', (e) => { if (this.editing(e.target) !== null) e.preventDefault() }, true)
    document.addEventListener('input', (e) => { if (this.editing(e.target) !== null) keepBlockText(this.session) }, true)
    addEventListener('pagehide', () => { unsavedBlocks.flush() })
    void this.start()
  }

  /** Pairs rendered wrappers with their source (ours, with drafts, shows the served draft); makes targets editable. */
  private async start (): Promise<void> {
    this.ui.say('Loading the editor…')
    const drafts = await this.api.draft().catch(() => null)
    const draftedAtLoad = new Set(drafts?.entries)
    const wrappers = Array.from(document.querySelectorAll<HTMLElement>('[data-cms-md]'))
    const failed = await Promise.all(wrappers.map(async (wrapper) => {
      const binding = parseBinding(wrapper.dataset.cmsMd)
      if (binding === null) return false
      const drafted = draftedAtLoad.has(`${binding.collection}/${binding.id}`)
      if (hintedBlocks(wrapper).length === 0) return !await this.align(wrapper, binding, drafted)
      if (!drafted) return false
      const { collection, id, path: field } = binding
      const html = await this.api.get<{ html: string }>('/render', { collection, id, field }).then(r => r.html, () => null)
      // The answer's `[data-cms-md]` wrapper, parsed in a template (detached: nothing in it runs or loads).
      const template = document.createElement('template')
      template.innerHTML = html ?? ''
      const served = template.content.firstElementChild
      if (!(served instanceof HTMLElement) || !served.hasAttribute('data-cms-md')) { this.showPublished.add(wrapper); return true }
      wrapper.replaceChildren(...Array.from(served.childNodes))
      return false
    }))
    for (const el of document.querySelectorAll<HTMLElement>(TARGETS)) this.prepare(el)
    const count = drafts?.count ?? 0
    if (failed.includes(true)) this.ui.say('Some text on this page cannot be edited: the server could not render it.', 'error')
    else if (count > 0) this.ui.say(`You have ${count} unpublished ${count === 1 ? 'draft' : 'drafts'}. Click any outlined text to edit it.`)
    else this.ui.say('Click any outlined text to edit it.')
    await offerUnsaved(this.api, this.ui, (s) => { void this.enqueueSave(s) })
  }

  /** Pairs a generator-rendered wrapper's blocks with the source (`GET /blocks`); false when that cannot be read. */
  private async align (wrapper: HTMLElement, binding: Binding, drafted: boolean): Promise<boolean> {
    const { collection, id, path: field } = binding
    const source = await this.api.get<{ blocks: SourceBlock[] }>('/blocks', { collection, id, field }).then(r => r.blocks, () => null)
    if (source === null) return false
    const active = this.session?.el
    const result = markAligned(wrapper, source, drafted, (el) => this.ui.contains(el) || el === active)
    wrapper.dataset.cmsAlignment = `${result.editable}/${result.blocks} ${result.ms.toFixed(1)}ms`
    for (const el of hintedBlocks(wrapper)) this.prepare(el)
    return true
  }

  private prepare (el: HTMLElement): void {
    el.classList.add('cms-editable')
    if (!el.hasAttribute('tabindex')) el.tabIndex = 0
    if (!el.hasAttribute('title')) el.title = 'Click to edit'
  }

  /** The bound element an event target belongs to, if any. */
  private targetOf (node: EventTarget | null): HTMLElement | null {
    if (!(node instanceof Element) || this.ui.contains(node)) return null
    const el = node.closest<HTMLElement>(TARGETS)
    return el !== null && el.classList.contains('cms-editable') ? el : null
  }

  /** The element of the current session when `node` lies inside it. */
  private editing (node: EventTarget | null): HTMLElement | null {
    const s = this.session
    return s !== null && node instanceof Node && s.el.contains(node) ? s.el : null
  }

  private onClick (e: MouseEvent): void {
    const el = this.targetOf(e.target)
    if (el === null) return
    // A bound link (or text inside a link) is edited, not followed.
    if (el.closest('a') !== null || (e.target as Element).closest('a') !== null) e.preventDefault()
    if (this.session?.el !== el) this.begin(el)
  }

  private onFocusIn (e: FocusEvent): void {
    const el = this.targetOf(e.target)
    if (el !== null && this.session?.el !== el) this.begin(el)
  }

  private onFocusOut (e: FocusEvent): void {
    const s = this.session
    if (s === null || this.prompting) return
    const next = e.relatedTarget as Node | null
    const leaving = s.el.contains(e.target as Node) || this.ui.contains(e.target as Node)
    if (!leaving) return
    // Moving between the text and the toolbar keeps the session (the buttons act on the text).
    if (next !== null && (s.el.contains(next) || this.ui.contains(next))) {
      if (s.el.contains(e.target as Node)) s.range = rangeInside(s.el)?.cloneRange() ?? s.range
      return
    }
    this.end(true)
  }

  private begin (el: HTMLElement): void {
    this.end(true)
    const locked = el.dataset.cmsLocked
    if (locked !== undefined) {
      this.ui.say(locked)
      return
    }
    const isField = el.hasAttribute('data-cms')
    const wrapper = isField ? null : el.closest<HTMLElement>('[data-cms-md]')
    const binding = parseBinding(isField ? el.dataset.cms : wrapper?.dataset.cmsMd)
    if (binding === null) {
      this.ui.say('This element is not bound to an entry the editor understands.', 'error')
      return
    }
    const kind = wrapper === null ? 'field' : el.dataset.cmsAligned !== undefined ? 'aligned' : 'block'
    const original = el.innerHTML
    if (kind === 'field') {
      try { el.contentEditable = 'plaintext-only' } catch { el.contentEditable = 'true' }
    } else {
      el.contentEditable = 'true'
    }
    el.classList.add('cms-active')
    el.spellcheck = true
    const session: EditSession = {
      el, kind, binding, wrapper, original,
      baseline: kind === 'field' ? el.textContent ?? '' : original,
      revision: this.api.entry(binding.collection, binding.id).then(r => r?.revision, () => undefined),
      range: null,
      unsavedKey: kind !== 'field' && el.dataset.cmsSrc !== undefined ? unsavedBlocks.key(binding.collection, binding.id, binding.path, el.dataset.cmsSrc) : null,
      index: wrapper === null ? 0 : hintedBlocks(wrapper).indexOf(el),
      knownRevision: null,
      textBefore: kind === 'aligned' ? ownText(el) : '',
      thaw: kind === 'aligned' ? freezeGeneratorMarkup(el) : null
    }
    this.session = session
    // Text typed before the revision arrived was kept without it: keep it again, with it.
    void session.revision.then(r => {
      session.knownRevision = r ?? null
      if (this.session === session && session.el.innerHTML !== session.original) keepBlockText(session)
    }, () => {})
    this.ui.activate()
    this.ui.setFormatting(kind !== 'field')
    if (document.activeElement !== el) el.focus()
    // Reached with Tab (or clicked before it was editable): the caret goes into the text.
    if (rangeInside(el) === null) placeCaret(el)
  }

  /** Ends the session; saves it when asked and something changed. */
  private end (save: boolean): void {
    const s = this.session
    if (s === null) return
    this.session = null
    s.thaw?.()
    s.el.removeAttribute('contenteditable')
    s.el.classList.remove('cms-active')
    this.ui.setFormatting(false)
    if (save) this.enqueueSave(s)
  }

  private cancel (): void {
    const s = this.session
    if (s === null) return
    s.el.innerHTML = s.original
    unsavedBlocks.drop()
    this.end(false)
    if (s.unsavedKey !== null) unsavedBlocks.forget(s.unsavedKey)
    s.el.blur()
    this.ui.say('Edit cancelled.')
  }

  private enqueueSave (s: EditSession): Promise<void> {
    // The text kept in the browser is written now, so a keep still pending cannot land after the
    // save's success cleared it (and offer back, on the next visit, text that was saved).
    unsavedBlocks.flush()
    const current = s.kind === 'field' ? s.el.textContent ?? '' : s.el.innerHTML
    if (current === s.baseline) return this.queue
    s.baseline = current
    this.queue = this.queue.then(async () => {
      if (s.kind === 'field') { await this.saveField(s, current); return }
      const hint = parseSourceHint(s.el.dataset.cmsSrc)
      if (hint === null || s.wrapper === null) { this.ui.say('Not saved: this block has no valid source hint.', 'error'); return }
      await this.saveBlock(s, current, hint, s.wrapper)
    }).catch(() => {
      this.ui.say('Not saved: something went wrong.', 'error')
    })
    return this.queue
  }

  private async saveField (s: EditSession, value: string): Promise<void> {
    const { collection, id, path } = s.binding
    this.ui.say('Saving…')
    const expectedRevision = await s.revision
    const res = await this.api.mutate({ type: 'save_field', collection, id, field: path, value, ...(expectedRevision === undefined ? {} : { expectedRevision }) })
      .catch((err: unknown) => { this.failedSave(s, err, value); return null })
    if (res === null) return
    s.revision = Promise.resolve(res.revision)
    // Without a permissions policy save_field writes the file itself; under one it is a draft.
    const entry = await this.api.entry(collection, id).catch(() => null)
    if (entry?.draft === true) this.markDraft(s.el)
    else { s.el.classList.add('cms-saved'); this.ui.say('Saved') }
  }

  /** Saves a Markdown block: its HTML (`md_block`), or an aligned block's text before and after and the marks the toolbar added (`md_edit`). */
  private async saveBlock (s: EditSession, html: string, hint: SourceHint, wrapper: HTMLElement): Promise<void> {
    const { collection, id, path } = s.binding
    const src = s.el.dataset.cmsSrc
    const { text: after, marks } = textAndMarks(s.el)
    if (s.kind === 'aligned' && after === s.textBefore && marks.length === 0) return
    this.ui.say('Saving…')
    const res = await this.api.call<Record<string, unknown>>('POST', '/mutate', s.kind === 'aligned'
      ? { type: 'md_edit', collection, id, field: path, src, before: s.textBefore, after, ...(marks.length > 0 ? { marks } : {}) }
      : { type: 'md_block', collection, id, blockPath: path, src, html }).catch((err: unknown) => {
      // The page shows base text (it could not be rendered afresh); an older draft moved its blocks.
      const olderDraft = s.kind === 'block' && err instanceof ApiError && err.status === 409 && this.showPublished.has(wrapper)
      this.failedSave(s, err, s.kind === 'aligned' ? after : s.el.innerText, olderDraft ? 'You have an unpublished draft of this entry from an earlier visit, and this page shows the published text. Your text was not saved; it is kept below. Publish or discard that draft, then reload the page.' : undefined)
      return null
    })
    if (res === null) return
    this.showPublished.delete(wrapper)
    // Text typed while the save was on its way stays kept.
    if (s.unsavedKey !== null && s.el.innerHTML === html) unsavedBlocks.forget(s.unsavedKey)
    s.textBefore = after
    // The elements the toolbar added are saved: the next save does not send them again.
    for (const el of Array.from(s.el.querySelectorAll(`[${MARK_ATTRIBUTE}]`))) el.removeAttribute(MARK_ATTRIBUTE)
    this.markDraft(s.el)
    // The page's hints were in the old body's terms: the save's answer moves them onto the draft.
    const block = res.block as { src?: unknown } | undefined
    const answered = typeof block?.src === 'string' ? block.src : res.src
    if (typeof answered === 'string' && moveHints(wrapper, s.el, hint, answered)) return
    // The answer does not continue the page's hints: pair the blocks with the draft's again.
    if (!await this.align(wrapper, s.binding, true)) this.ui.say('Draft saved. Reload the page to edit more of it.')
  }

  /** Marks an element as holding a saved draft, and says so. */
  private markDraft (el: HTMLElement): void {
    el.classList.remove('cms-conflict')
    el.classList.add('cms-draft')
    el.dataset.cmsState = 'draft'
    this.ui.say('Draft saved')
  }

  /** Says why a save was refused (`err`: an ApiError, else the server was not reached); a conflict (409) locks the element and shows the unsaved text. */
  private failedSave (s: EditSession, err: unknown, text: string, conflictMessage?: string): void {
    const { status, body }: { status: number, body: Record<string, unknown> } = err instanceof ApiError ? err : { status: 0, body: {} }
    // The text stays in the element; the next blur retries unless the element is locked below.
    s.baseline = s.kind === 'field' ? s.el.textContent ?? '' : s.original
    if (status === 409) {
      s.el.classList.add('cms-conflict', 'cms-locked')
      s.el.dataset.cmsLocked = 'This text changed elsewhere. Reload the page to edit it; copy your text first.'
      const rev = typeof body.currentRevision === 'number' ? ` (now at revision ${body.currentRevision})` : ''
      this.ui.say('Not saved: changed elsewhere. Reload the page to continue.', 'error')
      this.ui.showConflict(conflictMessage ?? `This content was changed elsewhere since the page was loaded${rev}. Your text was not saved; it is kept below and in the page. Copy it, then reload the page to edit the current version.`, text)
      return
    }
    if (status === 401) { this.ui.say('Not saved: you are signed out. Sign in again in another tab, then edit again.', 'error'); return }
    if (status === 0) { this.ui.say('Not saved: the server cannot be reached.', 'error'); return }
    this.ui.say(`Not saved: ${(err as Error).message}`, 'error')
  }

  private onKeyDown (e: KeyboardEvent): void {
    const s = this.session
    if (s === null || (this.editing(e.target) === null && !this.ui.contains(e.target as Node))) return
    const mod = e.ctrlKey || e.metaKey
    if (e.key === 'Escape') { e.preventDefault(); this.cancel(); return }
    if (mod && e.key.toLowerCase() === 's') {
      // Saves and leaves the text; the focus goes to the message that says how the save went.
      e.preventDefault()
      this.end(true)
      s.el.blur()
      void this.queue.then(() => { this.ui.status.focus() })
      return
    }
    if (this.editing(e.target) === null) return
    if (e.key === 'Enter' && !e.isComposing) {
      e.preventDefault()
      // A field is one line: Enter finishes it. In a block, Enter is a line break (<br>).
      if (s.kind === 'field') s.el.blur()
      else { insertPlainText(s.el, '\n', true); keepBlockText(s) }
      return
    }
    if (!mod || e.altKey) return
    const f = FORMATS.find(x => x.key === e.key.toUpperCase())
    if (f === undefined) return
    e.preventDefault()
    this.format(f)
  }

  private onPaste (e: ClipboardEvent): void {
    const s = this.session
    if (s === null || this.editing(e.target) === null) return
    e.preventDefault()
    insertPlainText(s.el, e.clipboardData?.getData('text/plain') ?? '', s.kind !== 'field')
    keepBlockText(s)
  }

  /** Applies a formatting to the selection of the block being edited. */
  private format (f: typeof FORMATS[number]): void {
    const s = this.session
    if (s === null || s.kind === 'field') return
    if (document.activeElement !== s.el) {
      s.el.focus()
      if (s.range !== null) select(s.range)
    }
    let href: string | undefined
    if (f.tag === 'a') {
      const range = rangeInside(s.el)?.cloneRange() ?? null
      this.prompting = true
      href = window.prompt('Link address (https://…, mailto:… or a path on this site)', 'https://')?.trim()
      this.prompting = false
      if (href === undefined) return
      if (href === '' || href === 'https://' || !isAllowedHref(href)) {
        this.ui.say('Link not added: use an http(s) or mailto address, or a path on this site.', 'error')
        return
      }
      s.el.focus()
      if (range !== null) select(range)
    }
    if (formatInline(s.el, f.tag, href) && s.kind === 'aligned') {
      // In an aligned block the element just added (selected) is tagged, so md_edit sends it.
      const added = rangeInside(s.el)?.startContainer
      if (added instanceof HTMLElement && added !== s.el && FORMATS.some(x => x.tag === added.localName)) added.setAttribute(MARK_ATTRIBUTE, '')
    }
    keepBlockText(s)
  }

  /** Publishes the editor's drafts and says how it went; the published blocks lose their draft mark. */
  private async publish (): Promise<void> {
    this.end(true)
    await this.queue
    this.ui.say('Publishing…')
    const report = await this.api.publish({}).catch((err: Error) => {
      this.ui.say(`Not published: ${err.message}`, 'error')
      return null
    })
    if (report === null) return
    const { published, conflicts, failed } = report
    const name = (x: { collection: string, id: string }): string => `${x.collection}/${x.id}`
    const parts: string[] = []
    if (published.length === 0 && conflicts.length === 0 && failed.length === 0) parts.push('Nothing to publish.')
    if (published.length > 0) parts.push(`Published ${published.length} ${published.length === 1 ? 'entry' : 'entries'}: ${published.map(name).join(', ')}.`)
    for (const c of conflicts) parts.push(`Not published ${name(c)}: ${c.message}.`)
    for (const f of failed) parts.push(`Failed ${name(f)}: ${f.error}.`)
    if (report.commit !== undefined) parts.push(`Commit ${report.commit.slice(0, 7)}.`)
    if (report.commitError !== undefined) parts.push(`Not committed: ${report.commitError}`)
    if (report.rebuild?.triggered === true) parts.push(report.rebuild.ok ? 'Site rebuild started.' : 'The site rebuild could not be started.')
    this.ui.say(parts.join(' '), conflicts.length + failed.length > 0 ? 'error' : 'info')
    // The draft blocks of the published entries now show published text.
    const done = new Set(published.map(name))
    for (const el of Array.from(document.querySelectorAll<HTMLElement>('.cms-draft'))) {
      const b = parseBinding(el.dataset.cms ?? el.closest<HTMLElement>('[data-cms-md]')?.dataset.cmsMd)
      if (b !== null && done.has(`${b.collection}/${b.id}`)) {
        el.classList.remove('cms-draft')
        el.dataset.cmsState = 'published'
      }
    }
  }

  private async discard (): Promise<void> {
    if (!window.confirm('Discard all your unpublished drafts?')) return
    this.cancel()
    await this.queue
    try { await this.api.call('DELETE', '/draft') } catch (err) { this.ui.say(`Not discarded: ${(err as Error).message}`, 'error'); return }
    this.ui.say('Drafts discarded. Reloading…')
    location.reload()
  }
}

/** Moves the hints by a save's answer (the saved block's; later ones by its growth); false when it does not continue `sent`. */
function moveHints (wrapper: HTMLElement, saved: HTMLElement, sent: SourceHint, answered: string): boolean {
  const next = parseSourceHint(answered)
  // A different start: the server moved a published-page hint onto the draft; the page's other hints are the published body's.
  if (next === null || next.start !== sent.start) return false
  const growth = (next.end - next.start) - (sent.end - sent.start)
  for (const el of hintedBlocks(wrapper)) {
    if (el === saved) continue
    const hint = parseSourceHint(el.dataset.cmsSrc)
    if (hint === null || hint.start < sent.end) continue
    el.dataset.cmsSrc = `${hint.start + growth}:${hint.end + growth}:${hint.hash}`
  }
  saved.dataset.cmsSrc = answered
  return true
}

// bootstrap.js sets the API base path before it loads this module.
void new InlineEditor((window as { __CMS_API__?: string }).__CMS_API__ ?? '/api/cms')
