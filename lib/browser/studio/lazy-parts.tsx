/**
 * The Studio's heavy parts, loaded when a page first shows them (each is its own chunk of the
 * split bundle): the Markdown editor (CodeMirror) and the media library. Until a part has loaded,
 * a plain "Loading…" stands in its place.
 */
import type { ComponentType, JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import type { MarkdownEditorProps } from './markdown-editor.js'
import type { MediaLibraryProps } from './media-library.js'

/** A component loaded on first use (null until it has loaded). */
function useLoaded<P> (load: () => Promise<ComponentType<P>>): { part: ComponentType<P> | null, error: string } {
  const [part, setPart] = useState<{ c: ComponentType<P> } | null>(null)
  const [error, setError] = useState('')
  useEffect(() => { load().then(c => setPart({ c }), (err: Error) => setError(err.message)) }, [])
  return { part: part?.c ?? null, error }
}

/** The stand-in shown while a part loads (or failed to). */
function Pending ({ error }: { error: string }): JSX.Element {
  return error === '' ? <p class="muted">Loading…</p> : <p class="error" role="alert">Could not load this part of the Studio: {error}</p>
}

/** The Markdown editor, loaded on first use. */
export function LazyMarkdownEditor (props: MarkdownEditorProps): JSX.Element {
  const { part: Editor, error } = useLoaded(async () => (await import('./markdown-editor.js')).MarkdownEditor)
  return Editor === null ? <><label for={props.id}>{props.label}</label><Pending error={error} /></> : <Editor {...props} />
}

/** The media library, loaded on first use. */
export function LazyMediaLibrary (props: MediaLibraryProps): JSX.Element {
  const { part: Library, error } = useLoaded(async () => (await import('./media-library.js')).MediaLibrary)
  return Library === null ? <Pending error={error} /> : <Library {...props} />
}
