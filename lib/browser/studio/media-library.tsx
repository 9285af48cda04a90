/**
 * The media library: the site's files with filters, sort, pages, upload and copy URL, and Insert
 * (picking) or Delete (warning of the entries that still reference the file).
 */
import type { JSX } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiError, query, type Api } from './api.js'
import type { MediaFile, MediaPage, MediaReference } from '../../api-shapes.js'
import { useDebouncedLoad, type StudioConfig } from './types.js'
import { Filter, Listed } from './dashboard.js'

const PAGE_SIZE = 24

/** Sort choices as the select shows them: value and label. */
const SORTS: Array<[string, string]> = [
  ['date-desc', 'Newest first'],
  ['date-asc', 'Oldest first'],
  ['name-asc', 'Name A–Z'],
  ['name-desc', 'Name Z–A'],
  ['size-desc', 'Largest first'],
  ['size-asc', 'Smallest first']
]
const TYPES: Array<[string, string]> = [['', 'All files'], ['image', 'Images'], ['pdf', 'PDF']]

/** Size ranges as the select shows them. */
const SIZES: Record<string, { label: string, minSize?: number, maxSize?: number }> = {
  '': { label: 'Any size' },
  small: { label: 'Under 100 KB', maxSize: 100 * 1024 - 1 },
  medium: { label: '100 KB to 1 MB', minSize: 100 * 1024, maxSize: 1024 * 1024 },
  large: { label: 'Over 1 MB', minSize: 1024 * 1024 + 1 }
}

/** What the library does when a file is chosen (picker mode). */
interface MediaPick {
  /** Called with the chosen file and the URL to write. */
  onPick: (file: MediaFile, url: string) => void
  /** The entry being edited: its own page-bundle files can be inserted (by their bare name). */
  entry: { collection: string, id: string } | null
}

/** The library's props. */
export interface MediaLibraryProps {
  api: Api
  config: StudioConfig
  /** Picker mode: Insert instead of Delete. */
  pick?: MediaPick
  /** Prefix of element ids (two libraries never share ids). */
  idPrefix: string
}

/** Why a file cannot be inserted into the entry being edited, or ''. */
function insertProblem (file: MediaFile, entry: MediaPick['entry']): string {
  if (file.entry === undefined) return ''
  if (entry !== null && file.entry.collection === entry.collection && file.entry.id === entry.id) return ''
  return `Belongs to the page bundle ${file.entry.collection}/${file.entry.id}`
}

/** The media library (a page, or a picker when `pick` is given). */
export function MediaLibrary ({ api, config, pick, idPrefix }: MediaLibraryProps): JSX.Element {
  // A picker shows images first.
  const [filters, setFilters] = useState({ q: '', folder: '', type: pick !== undefined ? 'image' : '', sort: 'date-desc', size: '', after: '', before: '' })
  const [page, setPage] = useState(1)
  const [listing, setListing] = useState<MediaPage | null>(null)
  const [error, setError] = useState('')
  const [status, setStatus] = useState('')
  const [tick, setTick] = useState(0)
  const [confirming, setConfirming] = useState<{ file: MediaFile, references: MediaReference[] } | null>(null)
  const confirmRef = useRef<HTMLDivElement>(null)
  const id = (name: string): string => `${idPrefix}-${name}`

  const { q, sort, size, ...rest } = filters
  useDebouncedLoad(async () => {
    const [by, order] = sort.split('-') as ['name' | 'size' | 'date', 'asc' | 'desc']
    const range: { minSize?: number, maxSize?: number } = SIZES[size] ?? {}
    return await api.get<MediaPage>('/media', { q, ...rest, sort: by, order, page, pageSize: PAGE_SIZE, minSize: range.minSize, maxSize: range.maxSize })
  }, r => {
    // The last file of the last page was deleted: show the page before it.
    if (r.files.length === 0 && page > 1) { setPage(Math.min(page - 1, r.pagination.totalPages)); return }
    setListing(r)
    setError('')
  }, err => setError(`Could not load the media library: ${err.message}`), q === '' ? 0 : 200, [filters, page, tick])
  useEffect(() => { confirmRef.current?.querySelector<HTMLElement>('button')?.focus() }, [confirming])
  // A picker opens with the focus in its search box.
  const search = useRef<HTMLInputElement>(null)
  useEffect(() => { if (pick !== undefined) search.current?.focus() }, [])

  // A changed filter shows its first page.
  const filter = (key: keyof typeof filters) => (value: string): void => { setFilters(f => ({ ...f, [key]: value })); setPage(1) }
  const copy = async (file: MediaFile): Promise<void> => {
    setStatus(await copyText(file.url) ? `Copied the URL of ${file.name}: ${file.url}` : `Could not copy; the URL is ${file.url}`)
  }
  const askDelete = async (file: MediaFile): Promise<void> => {
    try {
      setStatus('')
      const { references } = await api.get<{ references: MediaReference[] }>('/media/references', { path: file.path })
      setConfirming({ file, references })
    } catch (err) { setError(`Could not check where ${file.name} is used: ${(err as Error).message}`) }
  }
  const confirmDelete = async (): Promise<void> => {
    if (confirming === null) return
    const { file, references } = confirming
    try {
      await api.call('DELETE', `/media?${query({ path: file.path, force: references.length > 0 ? 'true' : undefined })}`)
      setConfirming(null)
      setStatus(`Deleted ${file.name}.`)
      setTick(x => x + 1)
    } catch (err) {
      // Someone referenced it meanwhile: show the new list and ask again.
      if (err instanceof ApiError && err.status === 409 && Array.isArray(err.body.references)) {
        setConfirming({ file, references: err.body.references as MediaReference[] })
      } else {
        setConfirming(null)
        setError(`Could not delete ${file.name}: ${(err as Error).message}`)
      }
    }
  }
  const upload = async (e: Event): Promise<void> => {
    const input = e.currentTarget as HTMLInputElement
    const file = input.files?.[0]
    if (file === undefined) return
    try {
      setStatus(`Uploading ${file.name}…`)
      const res = await api.upload(file)
      setStatus(`Uploaded ${file.name} as ${res.url}.`)
      filter('sort')('date-desc')
      setTick(x => x + 1)
    } catch (err) { setStatus(`Upload failed: ${(err as Error).message}`) } finally { input.value = '' }
  }

  const pg = listing?.pagination
  return (
    <div class="media-library">
      <div class="media-filters" role="search" aria-label="Filter the media library">
        <div class="media-filter grow">
          <label for={id('q')}>Search media</label>
          <input id={id('q')} ref={search} type="search" value={q} placeholder="File name" onInput={e => filter('q')((e.currentTarget as HTMLInputElement).value)} />
        </div>
        <Filter id={id('folder')} label="Folder" value={filters.folder} onChange={filter('folder')}
          options={[['', 'All folders'], ...(listing?.folders ?? []).map(f => [f.path, `${f.path} (${f.count})`] as [string, string])]} />
        <Filter id={id('sort')} label="Sort by" value={sort} onChange={filter('sort')} options={SORTS} />
        <Filter id={id('type')} label="Type" value={filters.type} onChange={filter('type')} options={TYPES} />
        <Filter id={id('size')} label="Size" value={size} onChange={filter('size')} options={Object.entries(SIZES).map(([k, s]) => [k, s.label])} />
        <Filter id={id('after')} label="Changed from" value={filters.after} onChange={filter('after')} />
        <Filter id={id('before')} label="Changed until" value={filters.before} onChange={filter('before')} />
        <div class="media-filter">
          <label for={id('upload')}>Upload a file</label>
          <input id={id('upload')} type="file" accept="image/*,application/pdf" onChange={e => { void upload(e) }} />
        </div>
      </div>
      <p class="status" role="status" aria-live="polite">{status}</p>
      {error !== '' && <p class="error" role="alert">{error}</p>}
      {confirming !== null && (
        <div class="media-confirm" role="alertdialog" aria-labelledby={id('confirm-heading')} aria-describedby={id('confirm-text')} ref={confirmRef}>
          <h2 id={id('confirm-heading')}>Delete {confirming.file.name}?</h2>
          {confirming.references.length === 0
            ? <p id={id('confirm-text')}>No entry references this file. Deleting removes it from the site's files{' '}(the next publish commits the removal).</p>
            : (
              <div id={id('confirm-text')}>
                <p class="warning"><strong>Warning:</strong> {confirming.references.length === 1 ? 'this entry still references' : `these ${confirming.references.length} entries still reference`} the file; their pages will show a broken image:</p>
                <ul>
                  {confirming.references.map(r => (
                    <li key={`${r.collection}/${r.id}/${r.draft === true ? r.editor ?? '' : ''}`}>
                      <a href={`${config.mountPath}/cms/${encodeURIComponent(r.collection)}/${encodeURIComponent(r.id)}`}>{r.collection}/{r.id}</a>
                      {r.draft === true && <span class="badge draft">Draft</span>}
                    </li>
                  ))}
                </ul>
              </div>
              )}
          <button type="button" class="danger" onClick={() => { void confirmDelete() }}>{confirming.references.length === 0 ? 'Delete' : 'Delete anyway'}</button>
          <button type="button" class="secondary" onClick={() => { setConfirming(null); setStatus('Nothing deleted.') }}>Cancel</button>
        </div>
      )}
      <Listed items={listing?.files} empty={<p>{q === '' ? 'No files here.' : `No file name matches “${q}”.`}</p>}>{files => (
            <ul class="media-grid" aria-label="Files">
              {files.map(file => {
                const problem = pick === undefined ? '' : insertProblem(file, pick.entry)
                return (
                  <li key={file.path} class="media-card">
                    <div class="media-thumb">
                      {file.type.startsWith('image/')
                        ? <img src={`${api.base}/media/file?${query({ path: file.path })}`} alt="" loading="lazy" width={160} height={120} />
                        : <span class="media-kind" aria-hidden="true">{file.type === 'application/pdf' ? 'PDF' : 'File'}</span>}
                    </div>
                    <p class="media-name" title={file.path}>{file.name}</p>
                    <p class="muted small media-meta">{formatSize(file.size)} · <time dateTime={new Date(file.mtime).toISOString()}>{new Date(file.mtime).toLocaleDateString()}</time><br />{file.folder}</p>
                    <div class="media-actions">
                      {pick !== undefined && (
                        <button type="button" aria-label={`Insert ${file.name}`} disabled={problem !== ''} title={problem !== '' ? problem : undefined}
                          onClick={() => pick.onPick(file, file.url)}>Insert</button>
                      )}
                      <button type="button" class="secondary" aria-label={`Copy URL of ${file.name}`} onClick={() => { void copy(file) }}>Copy URL</button>
                      {pick === undefined && <button type="button" class="danger" aria-label={`Delete ${file.name}`} onClick={() => { void askDelete(file) }}>Delete</button>}
                    </div>
                    {problem !== '' && <p class="muted small">{problem}</p>}
                  </li>
                )
              })}
            </ul>
      )}</Listed>
      {pg !== undefined && (
        <nav class="pages" aria-label="Media pages">
          <button type="button" class="secondary" disabled={!pg.hasPrev} onClick={() => setPage(page - 1)}>Previous page</button>
          <span>Page {pg.page} of {pg.totalPages} · {pg.total} {pg.total === 1 ? 'file' : 'files'}</span>
          <button type="button" class="secondary" disabled={!pg.hasNext} onClick={() => setPage(page + 1)}>Next page</button>
        </nav>
      )}
    </div>
  )
}

/** A file size for people. */
function formatSize (bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`
}

/** Copies text to the clipboard (else through a selected text field and the copy command). */
async function copyText (text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    const field = document.createElement('textarea')
    field.value = text
    field.setAttribute('readonly', '')
    field.style.cssText = 'position: fixed; opacity: 0'
    document.body.append(field)
    field.select()
    let ok = false
    try { ok = document.execCommand('copy') } catch {}
    field.remove()
    return ok
  }
}
