/** The Studio page of the media library (`/admin/cms/_media`): the library with Delete. */
import type { JSX } from 'preact'
import type { Api } from './api.js'
import { LazyMediaLibrary } from './lazy-parts.js'
import type { StudioConfig } from './types.js'

/** The path segment of the media page under `/cms` (never a collection name: those never start with `_`). */
export const MEDIA_SEGMENT = '_media'

/** The media library page. */
export function MediaPage ({ api, config }: { api: Api, config: StudioConfig }): JSX.Element {
  return (
    <section class="media-page">
      <nav class="crumbs" aria-label="Breadcrumb"><a href={`${config.mountPath}/cms`}>Collections</a> / <span>Media</span></nav>
      <h1>Media library</h1>
      <p class="muted">Uploads and the site's image folders. Copy a file's URL, or delete a file no page needs any more.</p>
      <LazyMediaLibrary api={api} config={config} idPrefix="media" />
    </section>
  )
}
