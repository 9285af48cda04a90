/**
 * The Markdown body editor: CodeMirror 6, a toolbar, images inserted at the cursor, and a preview
 * rendered by the server; with `preview.stylesheets` (CONTRACT 16) it is a sandboxed frame without scripts.
 */
import type { JSX } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { EditorView, basicSetup } from 'codemirror'
import { markdown } from '@codemirror/lang-markdown'
import { keymap } from '@codemirror/view'
import { EditorSelection, Prec } from '@codemirror/state'
import type { Api } from './api.js'
import { MediaPicker } from './lazy-parts.js'
import { studioConfig, useDebouncedLoad } from './types.js'

/** The editor's props. */
export interface MarkdownEditorProps {
  api: Api
  id: string
  label: string
  value: string
  mdx: boolean
  onChange: (value: string) => void
}

/** Wraps each selection in `mark` (or inserts `mark` twice with the cursor between). */
function wrap (view: EditorView, mark: string): boolean {
  view.dispatch(view.state.changeByRange(r => ({
    changes: [{ from: r.from, insert: mark }, { from: r.to, insert: mark }],
    range: EditorSelection.range(r.from + mark.length, r.to + mark.length)
  })))
  view.focus()
  return true
}

/** Puts `prefix` at the start of every line the selection touches. */
function prefixLines (view: EditorView, prefix: string): boolean {
  const { state } = view
  const changes: Array<{ from: number, insert: string }> = []
  for (const r of state.selection.ranges) {
    for (let pos = r.from; pos <= r.to;) {
      const line = state.doc.lineAt(pos)
      if (!changes.some(c => c.from === line.from)) changes.push({ from: line.from, insert: prefix })
      pos = line.to + 1
    }
  }
  view.dispatch({ changes })
  view.focus()
  return true
}

/** Makes the selection a link `[text](https://)` with the URL selected. */
function link (view: EditorView): boolean {
  view.dispatch(view.state.changeByRange(r => {
    const text = view.state.sliceDoc(r.from, r.to)
    const insert = `[${text}](https://)`
    const start = r.from + text.length + 3
    return { changes: { from: r.from, to: r.to, insert }, range: EditorSelection.range(start, start + 8) }
  }))
  view.focus()
  return true
}

/** The toolbar's buttons, `key` their shortcut. */
const TOOLS: Array<{ name: string, text: string, key?: string, run: (v: EditorView) => boolean }> = [
  { name: 'Heading', text: 'H', run: v => prefixLines(v, '## ') },
  { name: 'Bold (Ctrl+B)', text: 'B', key: 'Mod-b', run: v => wrap(v, '**') },
  { name: 'Italic (Ctrl+I)', text: 'I', key: 'Mod-i', run: v => wrap(v, '_') },
  { name: 'Link (Ctrl+K)', text: 'Link', key: 'Mod-k', run: link },
  { name: 'Bulleted list', text: '•', run: v => prefixLines(v, '- ') },
  { name: 'Quote', text: '❝', run: v => prefixLines(v, '> ') },
  { name: 'Code', text: '</>', run: v => wrap(v, '`') }
]

/** Inserts a link to a file at the cursor, an image as `![name](url)`. */
function insertFile (view: EditorView, file: { name: string, type: string }, url: string): void {
  const alt = file.name.replace(/\.[^.]*$/, '').replace(/[[\]]/g, '')
  // A URL with spaces or parentheses (a site's own file names) goes between <>.
  const target = /[\s()<>]/.test(url) ? `<${url.replace(/[<>]/g, encodeURIComponent)}>` : url
  const text = file.type.startsWith('image/') ? `![${alt}](${target})` : `[${alt}](${target})`
  const at = view.state.selection.main.head
  view.dispatch({ changes: { from: at, insert: text }, selection: { anchor: at + text.length } })
}

/** The frame's document: the stylesheets' links and an empty body the preview is written into. */
function frameDocument (stylesheets: string[]): string {
  const attr = (s: string): string => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')
  return '<!doctype html><html><head><meta charset="utf-8">' +
    stylesheets.map(href => `<link rel="stylesheet" href="${attr(href)}">`).join('') +
    '</head><body></body></html>'
}

/** The server's sanitized rendering (`html`) in a sandboxed frame with the site's stylesheets. */
function SitePreview ({ label, html, stylesheets }: { label: string, html: string, stylesheets: string[] }): JSX.Element {
  const frame = useRef<HTMLIFrameElement>(null)
  const latest = useRef(html)
  latest.current = html
  // The body is replaced in place (allow-same-origin lets the Studio reach it; scripts stay off),
  // so the frame is not reloaded, and its stylesheets not fetched again, on each keystroke. Written
  // on each change and again when the frame's document has loaded (it replaces the first one).
  const write = (): void => {
    const body = frame.current?.contentDocument?.body
    if (body != null) body.innerHTML = latest.current
  }
  useEffect(write, [html])
  return (
    <iframe ref={frame} class="md-preview-frame" title={`${label} preview`} sandbox="allow-same-origin"
      srcdoc={frameDocument(stylesheets)} onLoad={write} />
  )
}

/** The Markdown editor, its toolbar and the preview; `value` is the first document (a value set from outside remounts the editor). */
export function MarkdownEditor ({ api, id, label, value, mdx, onChange }: MarkdownEditorProps): JSX.Element {
  const host = useRef<HTMLDivElement>(null)
  const view = useRef<EditorView | null>(null)
  const fileInput = useRef<HTMLInputElement>(null)
  // The editor's handlers are made once: they reach the latest props here (the New form's id changes the upload scope).
  const latest = useRef({ api, onChange })
  latest.current = { api, onChange }
  const [html, setHtml] = useState('')
  const [stylesheets] = useState(() => studioConfig().previewStylesheets ?? [])
  const [status, setStatus] = useState('')
  const [picking, setPicking] = useState(false)

  const upload = async (file: File): Promise<void> => {
    const v = view.current
    if (v === null) return
    setStatus(`Uploading ${file.name}…`)
    try {
      insertFile(v, file, (await latest.current.api.upload(file)).url)
      setStatus(`Uploaded ${file.name}.`)
    } catch (err) { setStatus(`Upload failed: ${(err as Error).message}`) }
  }
  const uploadAll = (files: FileList | null | undefined): boolean => {
    const images = Array.from(files ?? []).filter(f => f.type.startsWith('image/'))
    if (images.length === 0) return false
    void (async () => { for (const f of images) await upload(f) })()
    return true
  }

  useEffect(() => {
    if (host.current === null) return
    const v = new EditorView({
      parent: host.current,
      doc: value,
      extensions: [
        Prec.high(keymap.of(TOOLS.filter(t => t.key !== undefined))),
        basicSetup,
        EditorView.cspNonce.of(studioConfig().styleNonce ?? ''),
        ...(mdx ? [] : [markdown()]),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({ 'aria-label': label, 'aria-multiline': 'true', id }),
        EditorView.updateListener.of(u => { if (u.docChanged) latest.current.onChange(u.state.doc.toString()) }),
        EditorView.domEventHandlers({
          paste: e => { if (uploadAll(e.clipboardData?.files)) { e.preventDefault(); return true } return false },
          drop: (e, v) => {
            const at = v.posAtCoords({ x: e.clientX, y: e.clientY })
            if (at !== null) v.dispatch({ selection: { anchor: at } })
            if (uploadAll(e.dataTransfer?.files)) { e.preventDefault(); return true }
            return false
          }
        })
      ]
    })
    view.current = v
    return () => { v.destroy(); view.current = null }
  }, [])
  useDebouncedLoad(async () => mdx ? '' : (await api.call<{ html: string }>('POST', '/preview', { ...api.uploadScope, body: value })).html, setHtml, err => setStatus(`Preview failed: ${err.message}`), 250, [value])

  return (
    <div class="md-editor">
      <div class="md-toolbar" role="toolbar" aria-label={`${label} formatting`}>
        {TOOLS.map(t => (
          <button key={t.name} type="button" class="secondary" aria-label={t.name} title={t.name}
            onMouseDown={e => e.preventDefault()} onClick={() => { if (view.current !== null) t.run(view.current) }}>{t.text}</button>
        ))}
        <button type="button" class="secondary" aria-label="Image" title="Image: upload and insert" onClick={() => fileInput.current?.click()}>Image</button>
        <input ref={fileInput} type="file" accept="image/*" hidden aria-label="Image file"
          onChange={e => { const input = e.currentTarget as HTMLInputElement; uploadAll(input.files); input.value = '' }} />
        <button type="button" class="secondary" aria-label="Choose image from library" title="Choose an image from the media library and insert it"
          onMouseDown={e => e.preventDefault()} onClick={() => setPicking(true)}>Library</button>
      </div>
      {picking && (
        <MediaPicker api={api} purpose={label} onClose={() => setPicking(false)} onPick={(file, url) => {
          const v = view.current
          if (v === null) return
          insertFile(v, file, url)
          v.focus()
          setStatus(`Inserted ${file.name}.`)
        }} />
      )}
      <div class="md-panes">
        <div class="md-source" ref={host} />
        {!mdx && (
          stylesheets.length > 0
            ? <section class="md-preview framed" aria-label={`${label} preview`}><SitePreview label={label} html={html} stylesheets={stylesheets} /></section>
            : (
              <section class="md-preview" aria-label={`${label} preview`} tabIndex={0}>
                {/* The server sanitized this HTML with renderMarkdown's allowlist. */}
                <div class="md-preview-body" dangerouslySetInnerHTML={{ __html: html }} />
              </section>
              )
        )}
      </div>
      <p class="status" role="status" aria-live="polite">{status}</p>
    </div>
  )
}
