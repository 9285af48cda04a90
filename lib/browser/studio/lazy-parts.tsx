/**
 * The Studio's heavy parts, each its own chunk loaded on first use (CodeMirror, the media library),
 * and the media picker: the library in a modal dialog.
 */
import type { ComponentChildren, ComponentType, JSX } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import type { Api } from './api.js'
import type { MarkdownEditorProps } from './markdown-editor.js'
import type { MediaLibraryProps } from './media-library.js'
import type { MediaFile } from '../../api-shapes.js'
import { studioConfig } from './types.js'

/** A component whose code loads on first use; until then `before` and a loading (or failure) line stand in. */
function lazyPart<P extends object> (load: () => Promise<ComponentType<P>>, before: (props: P) => ComponentChildren = () => null) {
  return function LazyPart (props: P): JSX.Element {
    const [part, setPart] = useState<{ c: ComponentType<P> } | null>(null)
    const [error, setError] = useState('')
    useEffect(() => { load().then(c => setPart({ c }), (err: Error) => setError(err.message)) }, [])
    if (part !== null) return <part.c {...props} />
    return <>{before(props)}{error === '' ? <p class="muted">Loading…</p> : <p class="error" role="alert">Could not load this part of the Studio: {error}</p>}</>
  }
}

/** The Markdown editor, loaded on first use. */
export const LazyMarkdownEditor = lazyPart<MarkdownEditorProps>(async () => (await import('./markdown-editor.js')).MarkdownEditor,
  props => <label for={props.id}>{props.label}</label>)
/** The media library, loaded on first use. */
export const LazyMediaLibrary = lazyPart<MediaLibraryProps>(async () => (await import('./media-library.js')).MediaLibrary)

interface MediaPickerProps {
  api: Api
  /** What the file is for, in the heading ("Cover image", "Body"). */
  purpose: string
  onPick: (file: MediaFile, url: string) => void
  onClose: () => void
}

/** The dialog picking a library file for an entry (`api` scoped to the entry). */
export function MediaPicker ({ api, purpose, onPick, onClose }: MediaPickerProps): JSX.Element {
  const dialog = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    const d = dialog.current
    if (d !== null && !d.open) d.showModal()
    return () => { if (d?.open === true) d.close() }
  }, [])
  return (
    <dialog ref={dialog} class="media-dialog" aria-labelledby="media-picker-heading" onClose={onClose}>
      <div class="media-dialog-head">
        <h2 id="media-picker-heading">Choose from the media library: {purpose}</h2>
        <button type="button" class="secondary" onClick={() => dialog.current?.close()}>Close</button>
      </div>
      <LazyMediaLibrary api={api} config={studioConfig()} idPrefix="picker"
        pick={{ entry: api.uploadScope, onPick: (file, url) => { dialog.current?.close(); onPick(file, url) } }} />
    </dialog>
  )
}
