/** The dashboard: every collection by its label, with its entry count and the editor's drafts. */
import type { JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import type { Api, PublishReport } from './api.js'
import { PublishResult } from './publish-result.js'
import { SyncStatus } from './sync-status.js'
import { SearchEverywhere } from './search-everywhere.js'
import type { StudioConfig } from './types.js'

/** The "Collections" page. */
export function Dashboard ({ api, config }: { api: Api, config: StudioConfig }): JSX.Element {
  const [counts, setCounts] = useState<Record<string, number | string>>({})
  const [drafts, setDrafts] = useState<number>(0)
  const [report, setReport] = useState<PublishReport | null>(null)
  const [error, setError] = useState('')
  const publishAll = async (): Promise<void> => {
    try {
      setError('')
      setReport(await api.publish({}))
      setDrafts((await api.draft()).count ?? 0)
    } catch (err) { setError(`Could not publish: ${(err as Error).message}`) }
  }
  useEffect(() => {
    for (const c of config.collections) {
      api.entries(c.name, { pageSize: 1 }).then(r => setCounts(x => ({ ...x, [c.name]: r.pagination.total })),
        () => setCounts(x => ({ ...x, [c.name]: 'unavailable' })))
    }
    api.draft().then(d => setDrafts(d.count ?? 0), () => setDrafts(0))
  }, [])
  return (
    <section>
      <h1>Collections</h1>
      <SearchEverywhere api={api} config={config} />
      {drafts > 0 && (
        <p class="badge-line">
          <span class="badge draft">Draft</span> You have {drafts} unpublished {drafts === 1 ? 'draft' : 'drafts'}.{' '}
          <button type="button" class="secondary" onClick={() => { void publishAll() }}>Publish all drafts</button>
        </p>
      )}
      {error !== '' && <p class="error" role="alert">{error}</p>}
      {report !== null && <PublishResult report={report} />}
      <ul class="cards">
        {config.collections.map(c => {
          const n = counts[c.name]
          return (
            <li key={c.name}>
              <a class="card" href={`${config.mountPath}/cms/${encodeURIComponent(c.name)}`}>
                <span class="icon" aria-hidden="true">{c.icon !== '' ? c.icon : '▤'}</span>
                <span class="label">{c.label}</span>
                <span class="count">{n === undefined ? '…' : typeof n === 'number' ? `${n} ${n === 1 ? 'entry' : 'entries'}` : n}</span>
              </a>
            </li>
          )
        })}
      </ul>
      {config.collections.length === 0 && <p>There are no collections yet.</p>}
      <SyncStatus api={api} />
    </section>
  )
}
