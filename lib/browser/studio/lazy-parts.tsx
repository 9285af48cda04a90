/**
 * The Studio's heavy parts, loaded when a page first shows them (each is its own chunk of the
 * split bundle): the Markdown editor (CodeMirror) and the media library. Until a part has loaded,
 * a plain "Loading…" stands in its place.
 */
import type { ComponentType, JSX } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import type { MarkdownEditorProps } from './markdown-editor.js'
import type { MediaLibraryProps } from './media-library.js'

/**
 * A component loaded on first use.
 * @param load the dynamic import that resolves to the component
 * @returns the component once loaded, else null
 */
function useLoaded<P> (load: () => Promise<ComponentType<P>>): { part: ComponentType<P> | null, error: string } {
  const [part, setPart] = useState<{ c: ComponentType<P> } | null>(null)
  const [error, setError] = useState('')
  useEffect(() => { load().then(c => setPart({ c }), (err: Error) => setError(err.message)) }, [])
  return { part: part?.c ?? null, error }
}

/** @param props what to say @returns the stand-in */
function Pending ({ error }: { error: string }): JSX.Element {
  return error === '' ? <p class="muted">Loading…</p> : <p class="error" role="alert">Could not load this part of the Studio: {error}</p>
}

/** @param props the Markdown editor's props @returns the editor, loaded on first use */
export function LazyMarkdownEditor (props: MarkdownEditorProps): JSX.Element {
  const { part: Editor, error } = useLoaded(async () => (await import('./markdown-editor.js')).MarkdownEditor)
  return Editor === null ? <><label for={props.id}>{props.label}</label><Pending error={error} /></> : <Editor {...props} />
}

/** @param props the library's props, and whether to focus its search box once shown @returns the library, loaded on first use */
export function LazyMediaLibrary (props: MediaLibraryProps & { focusSearch?: boolean }): JSX.Element {
  const { part: Library, error } = useLoaded(async () => (await import('./media-library.js')).MediaLibrary)
  const box = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (Library !== null && props.focusSearch === true) box.current?.querySelector<HTMLInputElement>('input[type=search]')?.focus()
  }, [Library])
  const { focusSearch, ...rest } = props
  return <div ref={box}>{Library === null ? <Pending error={error} /> : <Library {...rest} />}</div>
}
