/**
 * A collection's entries: search as you type (with snippets), sortable columns (`listFields`), a
 * draft filter, pages, delete and reorder, and the New form.
 */
import type { JSX } from 'preact'
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { ApiError, type Api, type Entry, type Issue, type JsonSchema } from './api.js'
import { slugOf, type Pagination } from '../../api-shapes.js'
import { Field, fieldLabel } from './schema-form.js'
import { entryTitle, focusSoon, useDebouncedLoad, type Navigate, type StudioCollection, type StudioConfig } from './types.js'
import { Filter, Listed, SearchSnippet } from './dashboard.js'
import { LocaleBadge } from './languages.js'

const PAGE_SIZE = 24

/** One column: a field and its heading. */
interface ListColumn {
  field: string
  label: string
}

/** The list's order: none (the collection's own), or a field and direction. */
interface ListSort {
  field: string
  order: 'asc' | 'desc'
}

/** Which entries the list shows by this editor's draft state. */
type DraftFilter = 'all' | 'only' | 'none'

/** A collection's schema as `GET /schema` gives it: the list's columns and language filter, and the New form. */
type SchemaAnswer = Awaited<ReturnType<Api['schema']>>

/** The columns of a collection: `title` first (the link), then the other named fields. */
function listColumns (listFields: string[] | null, schema: JsonSchema | null): ListColumn[] {
  const props = schema?.properties ?? {}
  const fields = listFields ?? ['title', ...(Object.hasOwn(props, 'date') ? ['date'] : [])]
  const ordered = ['title', ...fields.filter(f => f !== 'title')]
  return ordered.map(field => ({ field, label: fieldLabel(field, (Object.hasOwn(props, field) ? props[field] : undefined) ?? {}) }))
}

/** Sort buttons heading the columns: pressing one sorts ascending, pressing it again reverses. */
function SortHeader ({ columns, sort, onSort }: { columns: ListColumn[], sort: ListSort | null, onSort: (sort: ListSort) => void }): JSX.Element {
  return (
    <div class="list-head" role="group" aria-label="Sort entries">
      {columns.map(c => {
        const active = sort?.field === c.field
        const next: ListSort = { field: c.field, order: active && sort?.order === 'asc' ? 'desc' : 'asc' }
        const state = active ? (sort?.order === 'asc' ? ', sorted ascending' : ', sorted descending') : ''
        return (
          <button key={c.field} type="button" class={`sort-btn${active ? ' active' : ''}`} aria-pressed={active}
            aria-label={`Sort by ${c.label}${state}`} onClick={() => onSort(next)}>
            {c.label}<span aria-hidden="true">{active ? (sort?.order === 'asc' ? ' ▲' : ' ▼') : ' ↕'}</span>
          </button>
        )
      })}
      <span class="list-head-end" aria-hidden="true" />
    </div>
  )
}

function cellText (value: unknown): string {
  if (value === undefined || value === null) return '—'
  if (typeof value === 'boolean') return value ? 'Yes' : 'No'
  if (typeof value === 'string') return value.length > 80 ? value.slice(0, 79) + '…' : value
  if (typeof value === 'number') return String(value)
  if (Array.isArray(value)) return value.every(v => typeof v === 'string' || typeof v === 'number') ? value.join(', ') : `${value.length} items`
  return '…'
}

/** The page listing a collection's entries. */
export function CollectionPage ({ api, config, collection, navigate }: { api: Api, config: StudioConfig, collection: StudioCollection, navigate: Navigate }): JSX.Element {
  const [q, setQ] = useState('')
  const [page, setPage] = useState(1)
  const [list, setList] = useState<{ entries: Entry[], pagination: Pagination } | null>(null)
  const [error, setError] = useState('')
  const [creating, setCreating] = useState(false)
  const [tick, setTick] = useState(0)
  const [sort, setSort] = useState<ListSort | null>(null)
  const [draft, setDraft] = useState<DraftFilter>('all')
  const [locale, setLocale] = useState('')
  const [form, setForm] = useState<SchemaAnswer | null>(null)
  const [formError, setFormError] = useState('')
  useEffect(() => { api.schema(collection.name).then(setForm, (err: Error) => setFormError(`Could not load the form: ${err.message}`)) }, [])
  const columns = listColumns(collection.listFields ?? null, form?.schema ?? null)
  const base = `${config.mountPath}/cms/${encodeURIComponent(collection.name)}`

  useDebouncedLoad(async () => await api.entries(collection.name, { page, pageSize: PAGE_SIZE, q, ...(sort !== null ? { sort: sort.field, order: sort.order } : {}), draft, locale }),
    r => { setList(r); setError('') }, err => setError(`Could not load the entries: ${err.message}`), q === '' ? 0 : 200, [q, page, tick, sort, draft, locale])

  const remove = async (entry: Entry): Promise<void> => {
    if (!confirm(`Delete “${entryTitle(entry.id, entry.data)}”? Its history is kept.`)) return
    try {
      await api.mutate({ type: 'delete_entry', collection: collection.name, id: entry.id, expectedRevision: entry.revision })
      setTick(x => x + 1)
    } catch (err) { setError(`Could not delete: ${(err as Error).message}`) }
  }
  const move = async (index: number, delta: number): Promise<void> => {
    try {
      // reorder_entries needs every id of the collection, so read them all (in pages of 100).
      const ids: string[] = []
      for (let p = 1; ; p++) {
        const r = await api.entries(collection.name, { page: p, pageSize: 100 })
        ids.push(...r.entries.map(x => x.id))
        if (!r.pagination.hasNext) break
      }
      const shown = list?.entries ?? []
      const a = shown[index]?.id
      const b = shown[index + delta]?.id
      if (a === undefined || b === undefined) return
      const ia = ids.indexOf(a)
      const ib = ids.indexOf(b)
      ids[ia] = b
      ids[ib] = a
      await api.mutate({ type: 'reorder_entries', collection: collection.name, order: ids })
      setTick(x => x + 1)
    } catch (err) { setError(`Could not reorder: ${(err as Error).message}`) }
  }

  const pg = list?.pagination
  const canReorder = collection.orderable && q === '' && sort === null && draft === 'all'
  return (
    <section>
      <nav class="crumbs" aria-label="Breadcrumb"><a href={`${config.mountPath}/cms`}>Collections</a> / <span>{collection.label}</span></nav>
      <h1><span aria-hidden="true">{collection.icon}</span> {collection.label}</h1>
      {collection.description !== '' && <p class="muted">{collection.description}</p>}
      {collection.creatable && collection.singletonId === null && !creating && (
        <p><button type="button" class="new-btn" onClick={() => setCreating(true)}>New {collection.label}</button></p>
      )}
      {creating && (form === null
        ? <section class="new-entry" id="new-entry">{formError !== '' ? <p class="error" role="alert">{formError}</p> : <p>Loading…</p>}</section>
        : <NewEntry api={api} config={config} collection={collection} form={form} navigate={navigate} onCancel={() => { setCreating(false); focusSoon('.new-btn') }} />)}
      <div class="toolbar">
        <label for="search" class="search-label">Search</label>
        <input id="search" type="search" value={q} placeholder="Titles, text and bodies"
          onInput={e => { setQ((e.currentTarget as HTMLInputElement).value); setPage(1) }} />
        <Filter id="draft-filter" class="draft-filter" label="Show" value={draft} onChange={v => { setDraft(v as DraftFilter); setPage(1) }}
          options={[['all', 'All entries'], ['only', 'My drafts only'], ['none', 'Without my drafts']]} />
        {form?.i18n !== undefined && (
          <Filter id="locale-filter" class="draft-filter" label="Language" value={locale} onChange={v => { setLocale(v); setPage(1) }}
            options={[['', 'All languages'], ...form.i18n.locales.map(l => [l, l] as [string, string])]} />
        )}
      </div>
      {error !== '' && <p class="error" role="alert">{error}</p>}
      <Listed items={list?.entries} empty={<p>{draft === 'only' ? 'You have no drafts here.' : q === '' ? 'No entries yet.' : `Nothing matches “${q}”.`}</p>}>{entries => (
            <div class={columns.length > 1 ? 'list-grid with-cols' : 'list-grid'} style={`--cols: ${Math.max(1, columns.length - 1)}`}>
            <SortHeader columns={columns} sort={sort} onSort={next => { setSort(next); setPage(1) }} />
            <ul class="entries">
              {entries.map((entry, i) => (
                <li key={entry.id}>
                  <span class="title-cell">
                  <a href={`${base}/${encodeURIComponent(entry.id)}`}>{entryTitle(entry.id, entry.data)}</a>
                  <LocaleBadge locale={entry.locale} />
                  {entry.draft === true && <span class="badge draft">Draft</span>}
                  {entry.readError !== undefined && <span class="badge bad">Unreadable</span>}
                  {entry.validationIssues !== undefined && entry.validationIssues.length > 0 && <span class="badge bad">Invalid</span>}
                  </span>
                  {columns.slice(1).map(c => (
                    <span key={c.field} class="col" data-label={c.label}>{cellText(c.field === 'id' ? entry.id : entry.data?.[c.field])}</span>
                  ))}
                  {entry.snippet !== undefined && entry.snippet.text !== entryTitle(entry.id, entry.data) && <SearchSnippet snippet={entry.snippet} />}
                  <span class="actions">
                    {canReorder && <button type="button" class="icon-btn" aria-label={`Move ${entry.id} up`} disabled={i === 0} onClick={() => { void move(i, -1) }}>↑</button>}
                    {canReorder && <button type="button" class="icon-btn" aria-label={`Move ${entry.id} down`} disabled={i === entries.length - 1} onClick={() => { void move(i, 1) }}>↓</button>}
                    {collection.deletable && <button type="button" class="danger" aria-label={`Delete ${entry.id}`} onClick={() => { void remove(entry) }}>Delete</button>}
                  </span>
                </li>
              ))}
            </ul>
            </div>
      )}</Listed>
      {pg !== undefined && pg.totalPages > 1 && (
        <nav class="pages" aria-label="Pages">
          <button type="button" class="secondary" disabled={!pg.hasPrev} onClick={() => setPage(page - 1)}>Previous page</button>
          <span>Page {pg.page} of {pg.totalPages}</span>
          <button type="button" class="secondary" disabled={!pg.hasNext} onClick={() => setPage(page + 1)}>Next page</button>
        </nav>
      )}
    </section>
  )
}

interface NewEntryProps { api: Api, config: StudioConfig, collection: StudioCollection, form: SchemaAnswer, navigate: Navigate, onCancel: () => void }

/** Whether a required field holding this value counts as empty. */
const isEmpty = (v: unknown): boolean => v === undefined || v === null || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.length === 0)

/** The problems the form sees before sending: required fields left empty, strings under their minLength. */
function formIssues (schema: JsonSchema, values: Record<string, unknown>): Issue[] {
  const issues: Issue[] = []
  for (const [k, s] of Object.entries(schema.properties ?? {})) {
    const v = values[k]
    if ((schema.required ?? []).includes(k) && isEmpty(v)) issues.push({ path: k, code: 'required', message: `Fill in ${fieldLabel(k, s)}.` })
    else if (typeof v === 'string' && typeof s.minLength === 'number' && v.length < s.minLength) issues.push({ path: k, code: 'minLength', message: `${fieldLabel(k, s)} needs at least ${s.minLength} characters.` })
  }
  return issues
}

/** The "New" form: title first, the id a slug of it until typed, required fields checked before sending, a free id offered for a taken one. */
function NewEntry ({ api, config, collection, form: { schema, template }, navigate, onCancel }: NewEntryProps): JSX.Element {
  const [values, setValues] = useState<Record<string, unknown>>(template ?? {})
  const [id, setId] = useState('')
  // Once the editor types an id, the title no longer changes it.
  const idTyped = useRef(false)
  const [issues, setIssues] = useState<Issue[]>([])
  const [taken, setTaken] = useState<{ id: string, free: string } | null>(null)
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  const entryApi = useMemo(() => api.forEntry(collection.name, id === '' ? 'new' : id), [api, collection.name, id])
  useEffect(() => { focusSoon('#new-entry input') }, [])

  const titleKey = collection.titleField ?? (schema.properties?.title !== undefined ? 'title' : null)
  const exists = async (candidate: string): Promise<boolean> => {
    try { await api.entries(collection.name, { id: candidate }); return true } catch (err) {
      if (err instanceof ApiError && err.status === 404) return false
      throw err
    }
  }
  const freeId = async (wanted: string): Promise<string> => {
    for (let n = 2; n < 100; n++) {
      const candidate = `${wanted}-${n}`
      if (!(await exists(candidate))) return candidate
    }
    return `${wanted}-${Date.now().toString(36)}`
  }

  const create = async (e: Event): Promise<void> => {
    e.preventDefault()
    setError('')
    setTaken(null)
    const trimmed = id.trim().normalize('NFC')
    const problems = formIssues(schema, values)
    if (trimmed === '') problems.push({ path: '#id', code: 'id', message: 'Fill in the id.' })
    setIssues(problems)
    if (problems.length > 0) { focusSoon(`[aria-invalid=true]`); return }
    setBusy(true)
    try {
      if (await exists(trimmed)) {
        setTaken({ id: trimmed, free: await freeId(trimmed) })
        focusSoon('#new-id-taken')
        return
      }
      const data: Record<string, unknown> = { ...values }
      // An empty date, email or choice left as the template gave it is "no value", not '' that fails its format.
      for (const [k, p] of Object.entries(schema.properties ?? {})) {
        if (data[k] === '' && (p.format !== undefined || p.enum !== undefined)) delete data[k]
      }
      if ((collection.format === 'md' || collection.format === 'mdx') && typeof data.body !== 'string') data.body = ''
      await api.mutate({ type: 'put_entry', collection: collection.name, id: trimmed, data })
      navigate(`${config.mountPath}/cms/${encodeURIComponent(collection.name)}/${encodeURIComponent(trimmed)}`)
    } catch (err) {
      // The server checks the id's grammar (CONTRACT section 11); its reason goes next to the id.
      if (err instanceof ApiError && err.body.field === 'id') setIssues([{ path: '#id', code: 'id', message: err.message }])
      else if (err instanceof ApiError && Array.isArray(err.body.issues)) {
        setIssues(err.body.issues as Issue[])
        setError('Not created: some fields are not valid. See the messages next to them.')
      } else setError(`Could not create “${trimmed}”: ${(err as Error).message}`)
      focusSoon('#new-entry [role=alert]')
    } finally { setBusy(false) }
  }

  const props = Object.entries(schema.properties ?? {})
  const ordered = titleKey === null ? props : [...props.filter(([k]) => k === titleKey), ...props.filter(([k]) => k !== titleKey)]
  const idIssue = issues.find(i => i.path === '#id')
  const field = ([k, s]: [string, JsonSchema]): JSX.Element => (
    <Field key={k} api={entryApi} name={k} path={k} schema={s} value={values[k]} issues={issues}
      required={(schema.required ?? []).includes(k)}
      markdown={collection.format === 'md' || collection.format === 'mdx' ? collection.format : undefined}
      onChange={v => {
        setValues(x => ({ ...x, [k]: v }))
        // A title that gives the id also clears the id's message (it was about the id before).
        const derives = k === titleKey && !idTyped.current && typeof v === 'string'
        setIssues(list => list.filter(i => i.path !== k && !i.path.startsWith(k + '.') && !(derives && i.path === '#id')))
        if (derives) setId(slugOf(v, 80))
      }} />
  )
  return (
    <section class="new-entry" id="new-entry" aria-labelledby="new-entry-heading">
      <h2 id="new-entry-heading">New {collection.label}</h2>
      <form onSubmit={e => { void create(e) }} noValidate>
        {ordered.slice(0, titleKey === null ? 0 : 1).map(field)}
        <div class="field">
          <label for="new-id">Id (file name)</label>
          <input id="new-id" type="text" value={id} aria-invalid={idIssue !== undefined} aria-describedby="new-id-help"
            onInput={e => { idTyped.current = true; setId((e.currentTarget as HTMLInputElement).value); setTaken(null); setIssues(l => l.filter(i => i.path !== '#id')) }} />
          <p id="new-id-help" class="muted small">Made from the title; you can change it until the entry is created.</p>
          {idIssue !== undefined && <p class="issue" role="alert">{idIssue.message}</p>}
          {taken !== null && (
            <p class="issue" id="new-id-taken" role="alert" tabIndex={-1}>
              An entry “{taken.id}” already exists.{' '}
              <button type="button" class="secondary" onClick={() => { idTyped.current = true; setId(taken.free); setTaken(null) }}>Use “{taken.free}”</button>
            </p>
          )}
        </div>
        {ordered.slice(titleKey === null ? 0 : 1).map(field)}
        {issues.filter(i => i.path !== '#id' && !(i.path.split('.')[0]! in (schema.properties ?? {}))).map(i => <p class="issue" role="alert" key={i.path + i.code}>{i.path === '' ? '' : `${i.path}: `}{i.message}</p>)}
        {error !== '' && <p class="error" role="alert">{error}</p>}
        <div class="save-bar">
          <button type="submit" disabled={busy}>Create</button>
          <button type="button" class="secondary" onClick={onCancel}>Cancel</button>
        </div>
      </form>
    </section>
  )
}
