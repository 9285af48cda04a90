/** Publishing from the page: the editor's report in words, and its published blocks marked. */
import { parseBinding } from './bindings.js'
import type { CmsApi } from './api.js'
import type { PublishReport } from '../studio/api.js'
import type { EditorUi } from './editor-ui.js'

/** Publishes the editor's drafts and tells how it went (published, conflicts, failed, commit, rebuild). */
export async function publishDrafts (api: CmsApi, ui: EditorUi): Promise<void> {
  ui.say('Publishing…')
  let report: PublishReport
  try {
    report = await api.publish({})
  } catch (err) {
    ui.say(`Not published: ${(err as Error).message}`, 'error')
    return
  }
  const { published, conflicts, failed } = report
  const name = (x: { collection: string, id: string }): string => `${x.collection}/${x.id}`
  const parts: string[] = []
  if (published.length === 0 && conflicts.length === 0 && failed.length === 0) parts.push('Nothing to publish.')
  if (published.length > 0) parts.push(`Published ${published.length} ${published.length === 1 ? 'entry' : 'entries'}: ${published.map(name).join(', ')}.`)
  for (const c of conflicts) parts.push(`Not published ${name(c)}: ${c.message}.`)
  for (const f of failed) parts.push(`Failed ${name(f)}: ${f.error}.`)
  if (report.commit !== undefined) parts.push(`Commit ${report.commit.slice(0, 7)}.`)
  if (report.commitError !== undefined) parts.push(`Not committed: ${report.commitError}`)
  if (report.rebuild?.triggered === true) parts.push(report.rebuild.ok ? 'Site rebuild started.' : 'The site rebuild could not be started.')
  ui.say(parts.join(' '), conflicts.length + failed.length > 0 ? 'error' : 'info')
  // The draft blocks of the published entries now show published text.
  const done = new Set(published.map(name))
  for (const el of Array.from(document.querySelectorAll<HTMLElement>('.cms-draft'))) {
    const b = parseBinding(el.dataset.cms ?? el.closest<HTMLElement>('[data-cms-md]')?.dataset.cmsMd)
    if (b !== null && done.has(`${b.collection}/${b.id}`)) {
      el.classList.remove('cms-draft')
      el.dataset.cmsState = 'published'
    }
  }
}
