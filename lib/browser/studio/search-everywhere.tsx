/** The dashboard's one search box over every collection: results grouped by collection, each hit with its snippet. */
import type { JSX } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import type { Api, SearchGroup } from './api.js'
import { SearchSnippet } from './search-snippet.js'
import type { StudioConfig } from './types.js'

/** The search box over every collection, and its results. */
export function SearchEverywhere ({ api, config }: { api: Api, config: StudioConfig }): JSX.Element {
  const [q, setQ] = useState('')
  const [groups, setGroups] = useState<SearchGroup[] | null>(null)
  const [error, setError] = useState('')
  useEffect(() => {
    if (q.trim() === '') { setGroups(null); return }
    // Debounced: typing a word sends one request; a late answer to an older query is dropped.
    let current = true
    const timer = setTimeout(() => {
      api.searchAll(q).then(r => { if (current) { setGroups(r.groups); setError('') } }, (err: Error) => { if (current) setError(`Search failed: ${err.message}`) })
    }, 200)
    return () => { current = false; clearTimeout(timer) }
  }, [q])
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
