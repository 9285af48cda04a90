/** The Studio's API client (../studio/api.ts) for the inline editor: its answers never throw, so a save says why. */
import { Api, type Entry } from '../studio/api.js'
import type { SourceBlock } from '../../api-shapes.js'

/** Calls the editor API under one base path. */
export class CmsApi extends Api {
  /** Sends one request; gives its status (0 when the server cannot be reached) and parsed JSON body. */
  async request (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<{ status: number, body: Record<string, unknown> | null }> {
    return await this.send(method, path, body).catch(() => ({ status: 0, body: null }))
  }

  /** One entry as this editor sees it, or null when it cannot be read. */
  async readEntry (collection: string, id: string): Promise<Entry | null> {
    return await this.entry(collection, id).catch(() => null)
  }

  /** `GET /render`: the field as rendered for this editor, with hints (detached), or null. */
  async renderField (collection: string, id: string, field: string): Promise<HTMLElement | null> {
    const res = await this.request('GET', `/render?${new URLSearchParams({ collection, id, field }).toString()}`)
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
    const res = await this.request('GET', `/blocks?${new URLSearchParams({ collection, id, field }).toString()}`)
    const list = res.status === 200 ? res.body?.blocks : undefined
    return Array.isArray(list) ? list as SourceBlock[] : null
  }
}
