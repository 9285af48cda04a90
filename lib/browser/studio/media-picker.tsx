/**
 * The media library as a modal dialog, opened from an entry's image field or the Markdown
 * editor: choosing a file calls `onPick` with the URL to write, and closes. Escape or Close closes
 * without a choice; the browser's modal dialog keeps focus inside and gives it back afterwards.
 */
import type { JSX } from 'preact'
import { useEffect, useRef } from 'preact/hooks'
import type { Api } from './api.js'
import { LazyMediaLibrary } from './lazy-parts.js'
import type { MediaFile } from './media-api.js'
import { studioConfig } from './types.js'

interface Props {
  api: Api
  /** What the file is for, in the heading ("Cover image", "Body"). */
  purpose: string
  onPick: (file: MediaFile, url: string) => void
  onClose: () => void
}

/** The dialog picking a library file for an entry (`api` scoped to the entry). */
export function MediaPicker ({ api, purpose, onPick, onClose }: Props): JSX.Element {
  const dialog = useRef<HTMLDialogElement>(null)
  const closed = useRef(onClose)
  closed.current = onClose
  useEffect(() => {
    const d = dialog.current
    if (d === null) return
    const done = (): void => closed.current()
    d.addEventListener('close', done)
    if (!d.open) d.showModal()
    return () => { d.removeEventListener('close', done); if (d.open) d.close() }
  }, [])
  return (
    <dialog ref={dialog} class="media-dialog" aria-labelledby="media-picker-heading">
      <div class="media-dialog-head">
        <h2 id="media-picker-heading">Choose from the media library: {purpose}</h2>
        <button type="button" class="secondary" onClick={() => dialog.current?.close()}>Close</button>
      </div>
      <LazyMediaLibrary api={api} config={studioConfig()} idPrefix="picker"
        pick={{ entry: api.uploadScope, onPick: (file, url) => { dialog.current?.close(); onPick(file, url) } }} />
    </dialog>
  )
}
