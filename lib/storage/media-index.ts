/**
 * The media library's in-memory index of the media files under the media roots (CONTRACT sections 8
 * and 11), kept current by the service's uploads and deletions and a file watcher; and the grammar of a media path.
 */
import path from 'node:path'
import { lstat } from 'node:fs/promises'
import { isInside, relativeSlashPath, resolvesIntoRepo } from './safe-path.js'
import { listFolder, listingPace } from './list-folder.js'
import { lstatSync, type Dirent } from 'node:fs'
import type { Config, UploadType } from '../config.js'
import type { CollectionRegistry } from './collection-registry.js'
import type { ContentStore } from './content-store.js'
import { EXTENSIONS_READ } from './entry-paths.js'
import { BadRequestError } from '../errors.js'
import { isReservedKey } from '../content/reserved-keys.js'
import type { MediaFile, MediaPage, Pagination } from '../api-shapes.js'

/** What a list request may ask for (already validated). */
export interface MediaQuery {
  folder?: string
  q?: string
  kind?: 'image' | 'pdf'
  minSize?: number
  maxSize?: number
  after?: number
  before?: number
  sort: 'name' | 'size' | 'date'
  order: 'asc' | 'desc'
  page: number
  pageSize: number
}

/** What a media index needs from its instance. */
export interface MediaIndexOptions {
  repoDir: string
  config: Config
  /** Its collections give the roots and watch them. */
  content: ContentStore
  onWatchError?: (err: Error) => void
}

interface Indexed extends MediaFile {
  /** Lowercased name, for search and sorting. */
  key: string
}

const SKIPPED = new Set(['node_modules'])

/** The media index of one instance. */
export class MediaIndex {
  readonly #opts: MediaIndexOptions
  readonly #files = new Map<string, Indexed>()
  readonly #folders = new Map<string, number>()
  #roots: MediaRoot[] = []
  /** Roots whose folder did not exist (or could not be watched) yet: looked at again on each request. */
  #waiting = new Set<MediaRoot>()
  #building: Promise<void> | null = null
  #closed = false
  /** Changes reported while a build runs; applied after it. */
  #queue: Promise<void> = Promise.resolve()

  constructor (opts: MediaIndexOptions) {
    this.#opts = opts
  }

  /**
   * Builds the index (once; later calls wait for the same build).
   * @returns resolves when every root was read
   */
  async ready (): Promise<void> {
    this.#building ??= this.#build()
    await this.#building
    if (this.#waiting.size > 0) await this.#adoptWaiting()
    await this.#queue
  }

  /**
   * Stops the index (its roots' watches end with the content store's).
   * @returns resolves when a build under way has stopped
   */
  async close (): Promise<void> {
    this.#closed = true
    await this.#building?.catch(() => {})
  }

  /**
   * One page of files matching a query, and every folder with its count.
   * @param query validated filters, sort and page
   * @returns the page
   */
  async list (query: MediaQuery): Promise<MediaPage> {
    await this.ready()
    const q = query.q?.normalize('NFC').toLowerCase()
    const folder = query.folder
    const matches: Indexed[] = []
    for (const f of this.#files.values()) {
      if (folder !== undefined && f.folder !== folder && !f.folder.startsWith(folder + '/')) continue
      if (q !== undefined && q !== '' && !f.key.includes(q)) continue
      if (query.kind === 'image' && !f.type.startsWith('image/')) continue
      if (query.kind === 'pdf' && f.type !== 'application/pdf') continue
      if (query.minSize !== undefined && f.size < query.minSize) continue
      if (query.maxSize !== undefined && f.size > query.maxSize) continue
      if (query.after !== undefined && f.mtime < query.after) continue
      if (query.before !== undefined && f.mtime >= query.before) continue
      matches.push(f)
    }
    const dir = query.order === 'desc' ? -1 : 1
    const byName = (a: Indexed, b: Indexed): number => a.key < b.key ? -1 : a.key > b.key ? 1 : a.path < b.path ? -1 : a.path > b.path ? 1 : 0
    const compare = query.sort === 'size'
      ? (a: Indexed, b: Indexed) => (a.size - b.size) * dir || byName(a, b)
      : query.sort === 'date'
        ? (a: Indexed, b: Indexed) => (a.mtime - b.mtime) * dir || byName(a, b)
        : (a: Indexed, b: Indexed) => byName(a, b) * dir
    matches.sort(compare)
    const start = (query.page - 1) * query.pageSize
    const files = matches.slice(start, start + query.pageSize).map(publicView)
    const folders = [...this.#folders].map(([p, count]) => ({ path: p, count })).sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
    return { files, folders, pagination: paginate(query.page, query.pageSize, matches.length) }
  }

  /**
   * A file of the library by its path.
   * @param p a repository-relative path
   * @returns the file, or undefined when the library has no such file
   */
  async get (p: string): Promise<MediaFile | undefined> {
    await this.ready()
    const f = this.#files.get(p)
    return f === undefined ? undefined : publicView(f)
  }

  /**
   * The root a library file belongs to.
   * @param p a path the index holds
   * @returns the root, or undefined
   */
  rootOf (p: string): MediaRoot | undefined {
    return this.#rootFor(path.join(this.#opts.repoDir, ...p.split('/')))
  }

  /**
   * Looks at a file the service just wrote (an upload) so the next list shows it at once.
   * @param file absolute path
   * @returns resolves when the index is current for that file
   */
  async noteFile (file: string): Promise<void> {
    if (this.#building === null) return
    await this.ready()
    await this.#refresh(file)
  }

  async #build (): Promise<void> {
    const { repoDir, config, content } = this.#opts
    // Once the content store's watcher (which the roots share) sees changes.
    await content.watching
    this.#roots = (await siteMediaRoots(repoDir, config, content.registry)).sort((a, b) => b.dir.length - a.dir.length)
    for (const root of this.#roots) this.#waiting.add(root)
    await this.#adoptWaiting()
  }

  /** Walks and watches every root that exists now. */
  async #adoptWaiting (): Promise<void> {
    for (const root of [...this.#waiting]) {
      if (this.#closed) return
      let st
      try { st = lstatSync(root.dir) } catch { continue }
      this.#waiting.delete(root)
      if (!st.isDirectory() && !st.isSymbolicLink()) continue
      if (!resolvesIntoRepo(this.#opts.content.repoRealDir, root.dir)) { this.#opts.onWatchError?.(new Error(`media folder ${relativeSlashPath(this.#opts.repoDir, root.dir)} leaves the repository; not indexed`)); continue }
      await this.#opts.content.watch(root.dir, file => { this.#changed(file) })
      await this.#walk(root.dir)
    }
  }

  /** Queues a changed path: looked at again, in order, after the build. */
  #changed (file: string): void {
    this.#queue = this.#queue.then(async () => {
      await this.#refresh(file)
      await this.#rescanIfBundleIndex(file)
    }).catch(e => this.#opts.onWatchError?.(e as Error))
  }

  /** @param seen collects the absolute path of every file met */
  async #walk (dir: string, seen?: Set<string>, pace = listingPace()): Promise<void> {
    const entries: Dirent[] = []
    await listFolder(dir, pace, e => { entries.push(e) }).catch(() => {})
    for (const e of entries) {
      // Closing stops a build half-way (the instance is going away).
      if (this.#closed) return
      if (e.name.startsWith('.') || SKIPPED.has(e.name)) continue
      const full = path.join(dir, e.name)
      // Links are neither followed nor listed (a link may point anywhere).
      if (e.isDirectory()) await this.#walk(full, seen, pace)
      else if (e.isFile()) { seen?.add(full); await this.#add(full) }
    }
  }

  /** Re-reads one path after a change: a file is (re)indexed, a folder walked, a missing path forgotten with everything below it. */
  async #refresh (file: string): Promise<void> {
    const st = await lstat(file).catch(() => null)
    const rel = this.#relative(file)
    if (rel === null) return
    if (st === null) {
      this.forget(rel)
      for (const p of [...this.#files.keys()]) if (p.startsWith(rel + '/')) this.forget(p)
      return
    }
    if (st.isDirectory()) {
      // Walked again: files it no longer holds go (a folder replaced, or events lost).
      const seen = new Set<string>()
      await this.#walk(file, seen)
      if (this.#closed) return
      const below = rel + '/'
      for (const p of [...this.#files.keys()]) {
        if (p.startsWith(below) && !seen.has(path.join(this.#opts.repoDir, ...p.split('/')))) this.forget(p)
      }
      return
    }
    if (st.isFile()) await this.#add(file)
    else this.forget(rel)
  }

  /** A page bundle's index file came or went: the files beside it join or leave the library. */
  async #rescanIfBundleIndex (file: string): Promise<void> {
    const stem = path.basename(file, path.extname(file))
    if (!this.#roots.some(r => r.kind === 'bundles' && r.indexFile === stem && isInside(r.dir, file))) return
    await this.#refresh(path.dirname(file))
  }

  async #add (file: string): Promise<void> {
    const type = mediaTypeOf(file)
    if (type === undefined) return
    const rel = this.#relative(file)
    if (rel === null) return
    // Outside the library now (a page bundle's index file went away): forgotten.
    const root = this.#rootFor(file)
    if (root === undefined || rel.split('/').some(s => s.startsWith('.') || SKIPPED.has(s))) { this.forget(rel); return }
    const st = await lstat(file).catch(() => null)
    if (st === null || !st.isFile()) { this.forget(rel); return }
    const name = path.basename(file).normalize('NFC')
    const folder = path.posix.dirname(rel)
    let url: string
    let entry: MediaFile['entry']
    if (root.kind === 'bundles') {
      url = name
      entry = { collection: root.collection!, id: path.relative(root.dir, path.dirname(file)).split(path.sep).join('/').normalize('NFC') }
    } else {
      const below = path.relative(root.dir, file).split(path.sep).join('/')
      url = `${root.url === '/' ? '' : root.url.replace(/\/+$/, '')}/${below}`
    }
    const f: Indexed = {
      path: rel,
      url,
      name,
      folder,
      size: st.size,
      mtime: Math.trunc(st.mtimeMs),
      type,
      ...(root.collection !== undefined ? { collection: root.collection } : {}),
      ...(entry !== undefined ? { entry } : {}),
      key: name.toLowerCase()
    }
    if (!this.#files.has(rel)) this.#folders.set(folder, (this.#folders.get(folder) ?? 0) + 1)
    this.#files.set(rel, f)
  }

  /**
   * Forgets a file (the service just deleted it, or it went away).
   * @param rel its repository-relative path
   */
  forget (rel: string): void {
    const f = this.#files.get(rel)
    if (f === undefined) return
    this.#files.delete(rel)
    const n = (this.#folders.get(f.folder) ?? 1) - 1
    if (n <= 0) this.#folders.delete(f.folder)
    else this.#folders.set(f.folder, n)
  }

  /** The deepest root holding a file; a bundle root only for files in a page bundle's own folder. */
  #rootFor (file: string): MediaRoot | undefined {
    for (const root of this.#roots) {
      if (!isInside(root.dir, file) || root.dir === file) continue
      if (root.kind === 'uploads') return root
      const folder = path.dirname(file)
      if (folder === root.dir) continue
      const isBundle = (root.entryExtensions ?? []).some(ext => {
        try { return lstatSync(path.join(folder, `${root.indexFile ?? 'index'}${ext}`)).isFile() } catch { return false }
      })
      if (isBundle) return root
    }
    return undefined
  }

  #relative (file: string): string | null {
    const rel = relativeSlashPath(this.#opts.repoDir, file)
    return rel === '' || !isInside(this.#opts.repoDir, file) ? null : rel
  }
}

/**
 * Where a page of a list sits in it.
 * @param page the page number, from 1
 * @param pageSize items per page
 * @param total items in the whole list
 * @returns the pagination (one page at least, also of an empty list)
 */
export function paginate (page: number, pageSize: number, total: number): Pagination {
  const totalPages = Math.max(1, Math.ceil(total / pageSize))
  return { page, pageSize, total, totalPages, hasPrev: page > 1, hasNext: page < totalPages }
}

function publicView (f: Indexed): MediaFile {
  const { key: _key, ...rest } = f
  return rest
}

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

/** The file extension and MIME type of each allowed upload type. */
export const UPLOAD_TYPES: Record<UploadType, { ext: string, mime: string }> = {
  png: { ext: 'png', mime: 'image/png' },
  jpeg: { ext: 'jpg', mime: 'image/jpeg' },
  gif: { ext: 'gif', mime: 'image/gif' },
  webp: { ext: 'webp', mime: 'image/webp' },
  avif: { ext: 'avif', mime: 'image/avif' },
  pdf: { ext: 'pdf', mime: 'application/pdf' }
}

/** The MIME type of each file extension the library lists: the upload types, `.jpeg` and SVG. */
const MEDIA_TYPES: ReadonlyMap<string, string> = new Map([
  ...Object.values(UPLOAD_TYPES).map(t => [`.${t.ext}`, t.mime] as const),
  ['.jpeg', 'image/jpeg'],
  ['.svg', 'image/svg+xml']
])

/** The MIME type of a media file by its extension (undefined: the library does not list such files). */
function mediaTypeOf (file: string): string | undefined {
  return MEDIA_TYPES.get(path.extname(file).toLowerCase())
}

/** The folders the library indexes, from the config and the collections as they are now, without duplicates. */
async function siteMediaRoots (repoDir: string, config: Config, registry: CollectionRegistry): Promise<MediaRoot[]> {
  const roots: MediaRoot[] = []
  const add = (root: MediaRoot): void => {
    if (!roots.some(r => r.kind === root.kind && r.dir === root.dir)) roots.push(root)
  }
  const top = path.join(repoDir, config.uploadsDir)
  add({ dir: top, url: config.uploadsUrl, kind: 'uploads' })
  for (const c of await registry.list()) {
    if (c.uploads !== null) {
      const dir = path.join(repoDir, c.uploads.dir)
      add({ dir, url: c.uploads.url, kind: 'uploads', collection: c.name })
    }
    if (c.indexFile !== null && c.files === null) {
      add({ dir: c.dir, url: '', kind: 'bundles', collection: c.name, indexFile: c.indexFile, entryExtensions: EXTENSIONS_READ[c.format] })
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
