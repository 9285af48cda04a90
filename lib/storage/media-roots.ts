/**
 * Where the media library looks for files (CONTRACT sections 8 and 11): the top-level uploads
 * folder, each collection's own `uploadsDir`, and the page bundles of collections with `indexFile`
 * (images beside `index.md`). Also the file kinds it lists, and the grammar of a media path.
 */
import path from 'node:path'
import type { Config } from '../config.js'
import type { CollectionRegistry } from './collection-registry.js'
import { extensionsOf } from './entry-paths.js'
import { BadRequestError } from '../errors.js'
import { isReservedKey } from '../content/reserved-keys.js'

/** One folder the library indexes. */
export interface MediaRoot {
  /** Absolute folder. */
  dir: string
  /** URL prefix of its files (`/uploads`); empty for page bundles (files are referenced relative to their page). */
  url: string
  /** `uploads`: every media file below it; `bundles`: media files in the folders of a collection's page bundles. */
  kind: 'uploads' | 'bundles'
  /** The collection it belongs to (its own uploadsDir, or its bundles). */
  collection?: string
  /** For `bundles`: the index file's stem (`index` or `_index`) and the entry extensions. */
  indexFile?: string
  entryExtensions?: readonly string[]
}

/** The MIME type of each file extension the library lists (images, and PDF like uploads). */
const MEDIA_TYPES: ReadonlyMap<string, string> = new Map([
  ['.png', 'image/png'],
  ['.jpg', 'image/jpeg'],
  ['.jpeg', 'image/jpeg'],
  ['.gif', 'image/gif'],
  ['.webp', 'image/webp'],
  ['.avif', 'image/avif'],
  ['.svg', 'image/svg+xml'],
  ['.pdf', 'application/pdf']
])

/**
 * The MIME type of a media file by its extension.
 * @param file a file name or path
 * @returns the type, or undefined when the library does not list such files
 */
export function mediaTypeOf (file: string): string | undefined {
  return MEDIA_TYPES.get(path.extname(file).toLowerCase())
}

/**
 * The folders the library indexes, from the config and the collections as they are now, without
 * duplicates (a collection's uploadsDir equal to the top-level one is listed once).
 * @param repoDir the repository
 * @param config the instance config
 * @param registry the collection registry
 * @returns the roots
 */
export async function siteMediaRoots (repoDir: string, config: Config, registry: CollectionRegistry): Promise<MediaRoot[]> {
  const roots: MediaRoot[] = []
  const seen = new Set<string>()
  const add = (root: MediaRoot): void => {
    const key = `${root.kind}:${root.dir}`
    if (seen.has(key)) return
    seen.add(key)
    roots.push(root)
  }
  const top = path.join(repoDir, config.uploadsDir)
  add({ dir: top, url: config.uploadsUrl, kind: 'uploads' })
  for (const c of await registry.list()) {
    if (c.uploads !== null) {
      const dir = path.join(repoDir, c.uploads.dir)
      add({ dir, url: c.uploads.url, kind: 'uploads', collection: c.name })
    }
    if (c.indexFile !== null && c.files === null) {
      add({ dir: c.dir, url: '', kind: 'bundles', collection: c.name, indexFile: c.indexFile, entryExtensions: extensionsOf(c.format) })
    }
  }
  return roots
}

// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\u0000-\u001f\u007f\\]/

/**
 * Checks a media path from a request: repository-relative, `/`-separated, no empty, `.`, `..` or
 * hidden segment, no control character or backslash, at most 1,024 bytes. Whether the file is in
 * the library is decided by the index (a 404), not here.
 * @param value the `path` query parameter
 * @returns the path
 */
export function assertMediaPath (value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new BadRequestError('A media path is required', { field: 'path' })
  const p = value
  const bad = (reason: string): never => { throw new BadRequestError(`Invalid media path: ${reason}`, { field: 'path' }) }
  if (Buffer.byteLength(p) > 1024) bad('longer than 1,024 bytes')
  if (FORBIDDEN.test(p)) bad('control characters and backslashes are not allowed')
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) bad('it must be relative to the repository')
  for (const s of p.split('/')) {
    if (s === '' || s === '.' || s === '..') bad('empty, "." and ".." segments are not allowed')
    if (s.startsWith('.')) bad('hidden files are not in the library')
    if (isReservedKey(s)) bad(`"${s}" is reserved`)
  }
  return p
}
