/** The Studio's typed calls to the JSON API; a non-2xx answer throws ApiError. */
import type { LocaleLayout } from '../../content/i18n-layout.js'
import type { EntryView as Entry, Pagination, PublishReport } from '../../api-shapes.js'
import type { ValidationIssue as Issue } from '../../errors.js'

/** A non-2xx answer of the API. */
export class ApiError extends Error {
  constructor (readonly status: number, readonly body: Record<string, unknown>) {
    super(typeof body.error === 'string' ? body.error : `Request failed (${status})`)
  }
}

/** A validation issue, and an entry of a list, as the API reports them. */
export type { Entry, Issue, PublishReport }
/** A JSON Schema, as far as the form needs it. */
export interface JsonSchema {
  type?: string | string[]
  title?: string
  description?: string
  format?: string
  enum?: unknown[]
  properties?: Record<string, JsonSchema>
  items?: JsonSchema
  required?: string[]
  maxLength?: number
  contentMediaType?: string
  [key: string]: unknown
}
/** A collection's languages as `GET /schema` gives them (the server's layout, `prefixes` as a JSON object). */
export type LocaleInfo = Omit<LocaleLayout, 'prefixes'> & { prefixes: Record<string, string> }
/** A history snapshot. */
export interface Snapshot { ts: number, data: Record<string, unknown>, action: string, editor?: { id: string, name: string } }
/** The session route's answer. */
export interface Session { authenticated: boolean, identity: { id: string, name: string, roles: string[] } | null }

/** A query string of the parameters that have a value (undefined and '' are left out). */
export function query (params: Record<string, string | number | undefined>): string {
  const qs = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') qs.set(k, String(v))
  return qs.toString()
}

/** Calls to one API base path. */
export class Api {
  /**
   * A client of the API at `base` (e.g. /api/cms); `uploadScope` is the entry uploads belong to (its
   * collection's uploadsDir, or beside a page bundle).
   */
  constructor (readonly base: string, readonly uploadScope: { collection: string, id: string } | null = null) {}

  /** The same API whose uploads go where this entry keeps its files. */
  forEntry (collection: string, id: string): Api { return new Api(this.base, { collection, id }) }

  /** Sends one request and parses its JSON answer; an answer other than 2xx throws ApiError (a network failure throws too). */
  async call<T> (method: string, path: string, body?: unknown, csrf = true): Promise<T> {
    const headers: Record<string, string> = {}
    if (method !== 'GET' && csrf) headers['x-cms-request'] = '1'
    let payload: BodyInit | undefined
    if (body instanceof FormData) payload = body
    else if (body !== undefined) { headers['content-type'] = 'application/json'; payload = JSON.stringify(body) } else if (method !== 'GET' && csrf) headers['content-type'] = 'application/json'
    const res = await fetch(this.base + path, { method, headers, body: payload, credentials: 'same-origin' })
    const text = await res.text()
    let json: Record<string, unknown> = {}
    try { json = text === '' ? {} : JSON.parse(text) } catch { json = { error: text } }
    if (res.status < 200 || res.status > 299) throw new ApiError(res.status, json)
    return json as T
  }

  /** GETs `path` with the query parameters that have a value. */
  async get<T> (path: string, params: Record<string, string | number | undefined> = {}): Promise<T> {
    const qs = query(params)
    return await this.call('GET', qs === '' ? path : `${path}?${qs}`)
  }

  /** Lists entries. */
  async entries (collection: string, opts: { page?: number, pageSize?: number, q?: string, id?: string, sort?: string, order?: string, draft?: string, locale?: string } = {}): Promise<{ entries: Entry[], pagination: Pagination }> {
    return await this.get('/entries', { collection, ...opts })
  }

  /** One entry as this editor sees it (their draft laid over base), or null when there is none. */
  async entry (collection: string, id: string): Promise<Entry | null> {
    return (await this.entries(collection, { id })).entries.find(x => x.id === id) ?? null
  }

  /** A collection's schema, template, metadata and, for a collection in several languages, its locales. */
  async schema (collection: string): Promise<{ schema: JsonSchema, template?: Record<string, unknown>, metadata: Record<string, unknown>, i18n?: LocaleInfo }> {
    return await this.get('/schema', { collection })
  }

  /** Sends a mutation command. */
  async mutate (command: Record<string, unknown>): Promise<{ ok: boolean, revision: number }> { return await this.call('POST', '/mutate', command) }
  /** The editor's draft status: how many drafts, of which entries (`<collection>/<id>`). */
  async draft (): Promise<{ hasDrafts: boolean, count: number, entries: string[] }> { return await this.get('/draft') }
  /** Publishes `scope`. */
  async publish (scope: Record<string, unknown>): Promise<PublishReport> { return await this.call('POST', '/publish', scope) }
  /** Uploads a file; gives its URL. */
  async upload (file: File): Promise<{ url: string }> {
    const form = new FormData()
    form.append('file', file)
    return await this.call('POST', `/upload?${query({ ...this.uploadScope })}`, form)
  }
}
