/**
 * The editor API as the inline editor uses it: same-origin JSON requests with the request-forgery
 * header on every mutating call.
 */
import type { SourceBlock } from './align.js'

/** A response: its status and parsed JSON body (null when there was none or it was not JSON). */
export interface ApiResponse {
  status: number
  body: Record<string, unknown> | null
}

/** Calls the editor API under one base path. */
export class CmsApi {
  readonly base: string

  /**
   * @param base the API base path (`apiBasePath`, e.g. `/api/cms`)
   */
  constructor (base: string) {
    this.base = base.replace(/\/+$/, '')
  }

  /** Sends one request; network failures become status 0. */
  async request (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<ApiResponse> {
    const headers: Record<string, string> = { accept: 'application/json' }
    if (method !== 'GET') headers['x-cms-request'] = '1'
    if (body !== undefined) headers['content-type'] = 'application/json'
    let res: Response
    try {
      res = await fetch(this.base + path, {
        method,
        credentials: 'same-origin',
        headers,
        body: body === undefined ? undefined : JSON.stringify(body)
      })
    } catch {
      return { status: 0, body: null }
    }
    let parsed: Record<string, unknown> | null = null
    try {
      const value: unknown = await res.json()
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) parsed = value as Record<string, unknown>
    } catch {
      parsed = null
    }
    return { status: res.status, body: parsed }
  }

  /**
   * Reads one entry as this editor sees it (their draft laid over base).
   * @returns its data, revision and draft flag, or null when it cannot be read
   */
  async readEntry (collection: string, id: string): Promise<EntrySnapshot | null> {
    const q = `?collection=${encodeURIComponent(collection)}&id=${encodeURIComponent(id)}`
    const res = await this.request('GET', `/entries${q}`)
    const entries = res.status === 200 ? res.body?.entries : undefined
    const entry: unknown = Array.isArray(entries) ? entries[0] : undefined
    if (entry === null || typeof entry !== 'object') return null
    const { data, draft, revision } = entry as { data?: unknown, draft?: unknown, revision?: unknown }
    if (data === null || typeof data !== 'object') return null
    return { data: data as Record<string, unknown>, draft: draft === true, revision: typeof revision === 'number' ? revision : undefined }
  }

  /** `GET /render`: the field as rendered for this editor, with hints (detached), or null. */
  async renderField (collection: string, id: string, field: string): Promise<HTMLElement | null> {
    const q = `?collection=${encodeURIComponent(collection)}&id=${encodeURIComponent(id)}&field=${encodeURIComponent(field)}`
    const res = await this.request('GET', `/render${q}`)
    const html = res.status === 200 ? res.body?.html : undefined
    if (typeof html !== 'string') return null
    // A template parses without running anything (no scripts, no image loads) until adopted.
    const template = document.createElement('template')
    template.innerHTML = html
    const wrapper = template.content.firstElementChild
    return wrapper instanceof HTMLElement && wrapper.hasAttribute('data-cms-md') ? wrapper : null
  }

  /** `GET /blocks`: the field's source blocks as this editor sees them, in body order, or null. */
  async blocks (collection: string, id: string, field: string): Promise<SourceBlock[] | null> {
    const q = `?collection=${encodeURIComponent(collection)}&id=${encodeURIComponent(id)}&field=${encodeURIComponent(field)}`
    const res = await this.request('GET', `/blocks${q}`)
    const list = res.status === 200 ? res.body?.blocks : undefined
    if (!Array.isArray(list)) return null
    return list.filter((b): b is SourceBlock => b !== null && typeof b === 'object' &&
      typeof (b as SourceBlock).src === 'string' && typeof (b as SourceBlock).kind === 'string' && typeof (b as SourceBlock).text === 'string')
      .map(b => ({ src: b.src, kind: b.kind, text: b.text, editable: b.editable === true, ...(typeof b.depth === 'number' ? { depth: b.depth } : {}) }))
  }

  /**
   * The editor's draft state: `GET /draft`.
   * @returns how many drafts, and of which entries (`<collection>/<id>`); null when unreadable
   */
  async drafts (): Promise<{ count: number, entries: Set<string> } | null> {
    const res = await this.request('GET', '/draft')
    const count = res.body?.count
    const entries = res.body?.entries
    if (res.status !== 200 || typeof count !== 'number') return null
    return { count, entries: new Set(Array.isArray(entries) ? entries.filter((e): e is string => typeof e === 'string') : []) }
  }
}

/** One entry as readEntry returns it. */
export interface EntrySnapshot {
  data: Record<string, unknown>
  draft: boolean
  revision?: number
}
