/**
 * The dashboard: search over every collection, each collection with its entry count, the editor's
 * drafts, and the git remote's state in words (CONTRACT 13) when the site has one. Also the parts
 * other pages share with it: a search hit's snippet, a publish's outcome, a list filter and a loaded list.
 */
import type { JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import type { Api, PublishReport } from './api.js'
import type { SearchGroup, Snippet, SyncReport } from '../../api-shapes.js'
import { timeAgo, useDebouncedLoad, type StudioConfig } from './types.js'

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
      setDrafts((await api.draft()).count)
    } catch (err) { setError(`Could not publish: ${(err as Error).message}`) }
  }
  useEffect(() => {
    for (const c of config.collections) {
      api.entries(c.name, { pageSize: 1 }).then(r => setCounts(x => ({ ...x, [c.name]: r.pagination.total })),
        () => setCounts(x => ({ ...x, [c.name]: 'unavailable' })))
    }
    api.draft().then(d => setDrafts(d.count), () => setDrafts(0))
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

/** The search box over every collection, and its results. */
function SearchEverywhere ({ api, config }: { api: Api, config: StudioConfig }): JSX.Element {
  const [q, setQ] = useState('')
  const [groups, setGroups] = useState<SearchGroup[] | null>(null)
  const [error, setError] = useState('')
  useDebouncedLoad(async () => q.trim() === '' ? null : (await api.get<{ groups: SearchGroup[] }>('/search', { q })).groups,
    g => { setGroups(g); setError('') }, err => setError(`Search failed: ${err.message}`), q.trim() === '' ? 0 : 200, [q])
  const total = groups?.reduce((n, g) => n + g.total, 0) ?? 0
  return (
    <section class="search-all" aria-label="Search every collection">
      <label id="search-all-label" for="search-all">Search everything</label>
      <input id="search-all" type="search" value={q} placeholder="Every collection: titles, text and bodies" aria-describedby="search-all-status"
        onInput={e => setQ((e.currentTarget as HTMLInputElement).value)} />
      <p id="search-all-status" class="muted small" role="status">{groups === null ? '' : total === 0 ? `Nothing matches “${q}”.` : `${total} ${total === 1 ? 'match' : 'matches'} in ${groups.length} ${groups.length === 1 ? 'collection' : 'collections'}.`}</p>
      {error !== '' && <p class="error" role="alert">{error}</p>}
      {groups?.map(g => {
        const base = `${config.mountPath}/cms/${encodeURIComponent(g.collection)}`
        return (
          <section key={g.collection} class="search-group" aria-labelledby={`sg-${g.collection}`}>
            <h2 id={`sg-${g.collection}`}>{g.label} <span class="muted small">({g.total})</span></h2>
            <ul class="entries">
              {g.entries.map(e => (
                <li key={e.id}>
                  <span class="title-cell"><a href={`${base}/${encodeURIComponent(e.id)}`}>{e.title}</a>{e.draft === true && <span class="badge draft">Draft</span>}</span>
                  {e.snippet !== undefined && <SearchSnippet snippet={e.snippet} />}
                </li>
              ))}
            </ul>
            {g.total > g.entries.length && <p class="small"><a href={base}>All {g.total} in {g.label}</a></p>}
          </section>
        )
      })}
    </section>
  )
}

/** The sync status, or nothing without a remote. */
function SyncStatus ({ api }: { api: Api }): JSX.Element | null {
  const [sync, setSync] = useState<SyncReport | null>(null)
  const [note, setNote] = useState('')
  const [busy, setBusy] = useState(false)
  const load = async (): Promise<void> => { setSync((await api.get<{ sync?: SyncReport }>('/deployment')).sync ?? null) }
  useEffect(() => { load().catch(() => {}) }, [])
  if (sync === null || !sync.configured) return null
  const retry = async (): Promise<void> => {
    setBusy(true)
    try {
      const report = await api.publish({ retryPush: true })
      setNote(report.push === undefined ? 'Nothing was waiting to be pushed.' : report.push.ok ? `Pushed ${report.push.commit.slice(0, 7)} to ${sync.remote ?? 'the remote'}.` : `The push failed again: ${report.push.error}`)
      await load()
    } catch (err) { setNote(`Could not retry the push: ${(err as Error).message}`) } finally { setBusy(false) }
  }
  return (
    <section class="sync-status" aria-label="Git remote">
      <h2>Git remote</h2>
      <p class={sync.state === 'ok' ? '' : 'warning'}>{sync.message}</p>
      <p>Last fetch from {sync.remote}/{sync.branch}: {sync.lastFetchAt === null ? 'not yet' : timeAgo(sync.lastFetchAt)}{sync.lastFetchError !== null ? ` (failed: ${sync.lastFetchError})` : ''}.</p>
      <p>Last push: {sync.lastPush === null ? 'none since the service started' : `${sync.lastPush.commit.slice(0, 7)}, ${timeAgo(sync.lastPush.at)}`}.</p>
      {sync.state === 'diverged' && <p class="error" role="alert">The remote branch and this server's history have diverged. Nothing is merged or pushed until someone reconciles them on the server.</p>}
      {sync.pushPending && sync.pushError !== null && (
        <p class="error" role="alert">
          A publish did not reach the git host: {sync.pushError}{' '}
          <button type="button" class="secondary" disabled={busy} onClick={() => { void retry() }}>Retry push</button>
        </p>
      )}
      {sync.divergedRefs.length > 0 && <p class="warning">Kept local and not pushed (changed on both sides): {sync.divergedRefs.join(', ')}.</p>}
      {note !== '' && <p role="status">{note}</p>}
    </section>
  )
}

/** The snippet line of a listed entry (elements built by Preact: the excerpt is text, never HTML). */
export function SearchSnippet ({ snippet }: { snippet: Snippet }): JSX.Element {
  const parts: Array<string | JSX.Element> = []
  let at = 0
  snippet.marks.forEach(([start, end], i) => {
    if (start < at || end > snippet.text.length) return
    parts.push(snippet.text.slice(at, start), <mark key={i}>{snippet.text.slice(start, end)}</mark>)
    at = end
  })
  parts.push(snippet.text.slice(at))
  return <p class="snippet"><span class="snippet-field">{snippet.field}:</span> {parts}</p>
}

/** A publish report's per-entry outcomes in words. */
export function PublishResult ({ report }: { report: PublishReport }): JSX.Element {
  return (
    <div class="report" role="status">
      {report.published.map(p => <p key={'p' + p.id}>Published {p.collection}/{p.id}{p.deleted ? ' (deleted)' : ''}.</p>)}
      {report.conflicts.map(c => <p class="error" key={'c' + c.id}>Not published {c.collection}/{c.id}: {c.message}</p>)}
      {report.failed.map(f => <p class="error" key={'f' + f.id}>Failed {f.collection}/{f.id}: {f.error}</p>)}
      {report.published.length + report.conflicts.length + report.failed.length === 0 && <p>Nothing to publish.</p>}
      {report.commit !== undefined && <p>Commit {report.commit.slice(0, 7)}.</p>}
      {report.commitError !== undefined && <p class="error">Commit failed: {report.commitError}</p>}
      {report.push !== undefined && (report.push.ok ? <p>Pushed to the git host.</p> : <p class="error">Not pushed to the git host: {report.push.error} (Retry push on the dashboard sends it.)</p>)}
      {report.rebuild?.triggered === true && <p>{report.rebuild.ok ? 'Rebuild started.' : 'The rebuild hook failed; it can be retried.'}</p>}
    </div>
  )
}

/** One filter of a list: a labelled select of `options` (value and label), else a date; `class` names its box. */
export function Filter ({ id, label, value, onChange, options, class: box = 'media-filter' }: {
  id: string
  label: string
  value: string
  onChange: (value: string) => void
  options?: Array<[string, string]>
  class?: string
}): JSX.Element {
  const change = (e: Event): void => onChange((e.currentTarget as HTMLInputElement | HTMLSelectElement).value)
  return (
    <div class={box}>
      <label for={id}>{label}</label>
      {options === undefined
        ? <input id={id} type="date" value={value} onInput={change} />
        : <select id={id} value={value} onChange={change}>{options.map(([v, text]) => <option key={v} value={v}>{text}</option>)}</select>}
    </div>
  )
}

/** A list once loaded: "Loading…" until `items` is there, `empty` when it holds none, else what `children` makes of them. */
export function Listed<T> ({ items, empty, children }: { items: T[] | null | undefined, empty: JSX.Element, children: (items: T[]) => JSX.Element }): JSX.Element {
  if (items === undefined || items === null) return <p>Loading…</p>
  return items.length === 0 ? empty : children(items)
}
