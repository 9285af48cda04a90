/**
 * The media library's calls (`GET /media`, `GET /media/references`, `DELETE /media`) over the
 * Studio's Api, and small helpers to show a file (its thumbnail URL, size and date).
 */
import type { Api, Pagination } from './api.js'

/** One file of the library, as `GET /media` lists it. */
export interface MediaFile {
  path: string
  url: string
  name: string
  folder: string
  size: number
  mtime: number
  type: string
  collection?: string
  entry?: { collection: string, id: string }
}

/** An entry that still references a file (its saved file, or an editor's draft). */
export interface MediaReference { collection: string, id: string, file?: string, draft?: true, editor?: string }

/** What a list request may ask for. */
interface MediaListQuery {
  folder?: string
  q?: string
  type?: '' | 'image' | 'pdf'
  sort?: 'name' | 'size' | 'date'
  order?: 'asc' | 'desc'
  page?: number
  pageSize?: number
  minSize?: number
  maxSize?: number
  after?: string
  before?: string
}

/** One page of the library. */
export interface MediaListing { files: MediaFile[], folders: Array<{ path: string, count: number }>, pagination: Pagination }

/** Lists one page of the library. */
export async function listMedia (api: Api, query: MediaListQuery): Promise<MediaListing> {
  const qs = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') qs.set(k, String(v))
  return await api.call('GET', `/media?${qs.toString()}`)
}

/** The entries that still reference a file. */
export async function mediaReferences (api: Api, path: string): Promise<MediaReference[]> {
  return (await api.call<{ references: MediaReference[] }>('GET', `/media/references?path=${encodeURIComponent(path)}`)).references
}

/** Deletes a file (with `force`, even when entries still reference it). */
export async function deleteMedia (api: Api, path: string, force: boolean): Promise<void> {
  await api.call('DELETE', `/media?path=${encodeURIComponent(path)}${force ? '&force=true' : ''}`)
}

/** The URL of a file's bytes for a thumbnail (served by the API for every library file). */
export function thumbnailUrl (api: Api, path: string): string {
  return `${api.base}/media/file?path=${encodeURIComponent(path)}`
}

/** A file size for people. */
export function formatSize (bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`
}

/**
 * Copies text to the clipboard (the async clipboard where the page may use it, else a selected
 * text field and the copy command).
 */
export async function copyText (text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    const field = document.createElement('textarea')
    field.value = text
    field.setAttribute('readonly', '')
    field.style.position = 'fixed'
    field.style.opacity = '0'
    document.body.append(field)
    field.select()
    let ok = false
    try { ok = document.execCommand('copy') } catch {}
    field.remove()
    return ok
  }
}
