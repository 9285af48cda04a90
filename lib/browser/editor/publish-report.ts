/**
 * Publishing from the page: what the in-place editor says after a publish, and the blocks it then
 * shows as published.
 */
import { parseBinding } from './bindings.js'
import type { CmsApi } from './api.js'
import type { EditorUi } from './editor-ui.js'

/** Publishes the editor's drafts and tells how it went. */
export async function publishDrafts (api: CmsApi, ui: EditorUi): Promise<void> {
  ui.say('Publishing…')
  const res = await api.request('POST', '/publish', {})
  if (res.status !== 200 || res.body === null) {
    ui.say(`Not published: ${typeof res.body?.error === 'string' ? res.body.error : `HTTP ${res.status}`}`, 'error')
    return
  }
  const report = publishReport(res.body)
  ui.say(report.message, report.error ? 'error' : 'info')
  markPublished(report.published)
}

/** A publish answer told in words. */
export interface PublishReport {
  message: string
  /** Something was not published. */
  error: boolean
  /** The entries published (`collection/id`). */
  published: Set<string>
}

/** Tells a publish answer (published, conflicts, failed, commit, rebuild) in words. */
export function publishReport (body: Record<string, unknown>): PublishReport {
  const list = (key: string): Array<Record<string, unknown>> => {
    const v = body[key]
    return Array.isArray(v) ? v.filter((x): x is Record<string, unknown> => x !== null && typeof x === 'object') : []
  }
  const name = (x: Record<string, unknown>): string => `${String(x.collection)}/${String(x.id)}`
  const published = list('published')
  const conflicts = list('conflicts')
  const failed = list('failed')
  const parts: string[] = []
  if (published.length === 0 && conflicts.length === 0 && failed.length === 0) parts.push('Nothing to publish.')
  if (published.length > 0) parts.push(`Published ${published.length} ${published.length === 1 ? 'entry' : 'entries'}: ${published.map(name).join(', ')}.`)
  for (const c of conflicts) parts.push(`Not published ${name(c)}: ${typeof c.message === 'string' ? c.message : String(c.code)}.`)
  for (const f of failed) parts.push(`Failed ${name(f)}: ${typeof f.error === 'string' ? f.error : 'error'}.`)
  if (typeof body.commit === 'string') parts.push(`Commit ${body.commit.slice(0, 7)}.`)
  if (typeof body.commitError === 'string') parts.push(`Not committed: ${body.commitError}`)
  const rebuild = body.rebuild as { triggered?: unknown, ok?: unknown } | undefined
  if (rebuild?.triggered === true) parts.push(rebuild.ok === true ? 'Site rebuild started.' : 'The site rebuild could not be started.')
  return { message: parts.join(' '), error: conflicts.length + failed.length > 0, published: new Set(published.map(name)) }
}

/** Shows the draft blocks of the published entries as published. */
export function markPublished (done: Set<string>): void {
  for (const el of Array.from(document.querySelectorAll<HTMLElement>('.cms-draft'))) {
    const b = parseBinding(el.dataset.cms ?? el.closest<HTMLElement>('[data-cms-md]')?.dataset.cmsMd)
    if (b !== null && done.has(`${b.collection}/${b.id}`)) {
      el.classList.remove('cms-draft')
      el.dataset.cmsState = 'published'
    }
  }
}
