/**
 * One entry: the schema form under a sticky action bar (Save, Ctrl/Cmd+S, Publish, Discard draft),
 * optimistic locking, issues, history; typing is kept in the browser (unsaved.ts) until saved.
 */
import type { JSX } from 'preact'
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { ApiError, query, type Api, type Entry, type Issue, type JsonSchema, type LocaleInfo, type PublishReport, type Snapshot } from './api.js'
import { Field } from './schema-form.js'
import { applyRecord, diffValues, hasChanges, unsavedRecords, type UnsavedRecord } from './unsaved.js'
import { PublishResult } from './dashboard.js'
import { ConflictPanel, HistoryPanel, UnsavedOffer } from './versions.js'
import { entryTitle, focusSoon, type Navigate, type StudioCollection, type StudioConfig } from './types.js'
import { OutdatedBadge, TranslationSource, TranslationsPanel } from './languages.js'
import { entryUrl } from '../../http/page-match-url.js'

interface Props { api: Api, config: StudioConfig, collection: StudioCollection, id: string, navigate: Navigate }

/** The page editing one entry. */
export function EntryPage ({ api, config, collection, id, navigate }: Props): JSX.Element {
  // Uploads from this entry's fields go where its collection keeps files (beside a page bundle).
  const entryApi = useMemo(() => api.forEntry(collection.name, id), [api, collection.name, id])
  const [entry, setEntry] = useState<Entry | null>(null)
  const [form, setForm] = useState<{ schema: JsonSchema, i18n?: LocaleInfo } | null>(null)
  const [values, setValues] = useState<Record<string, unknown>>({})
  // Values set from outside (a load, a restore, resolved conflict) remount the fields, so each starts from them.
  const [formKey, setFormKey] = useState(0)
  const replaceValues = (next: Record<string, unknown>): void => { setValues(next); setFormKey(k => k + 1) }
  const [issues, setIssues] = useState<Issue[]>([])
  const [message, setMessage] = useState<{ kind: 'ok' | 'error', text: string } | null>(null)
  const [conflict, setConflict] = useState<{ revision: number, theirs: Entry | null } | null>(null)
  const [history, setHistory] = useState<Snapshot[] | null>(null)
  const [report, setReport] = useState<PublishReport | null>(null)
  const [busy, setBusy] = useState(false)
  const [notFound, setNotFound] = useState(false)
  // Unsaved changes found in the browser when the entry was loaded, until the editor chooses.
  const [offer, setOffer] = useState<UnsavedRecord | null>(null)
  const [unsavedStatus, setUnsavedStatus] = useState('')
  const recordKey = unsavedRecords.key(collection.name, id)
  const flush = (): void => { unsavedRecords.flush() }
  /** Says how an action went beside Save, and moves the focus there so it is read out. */
  const say = (kind: 'ok' | 'error', text: string): void => {
    setMessage({ kind, text })
    focusSoon('#save-message')
  }

  const load = async (): Promise<void> => {
    try {
      const [e, s] = await Promise.all([api.entry(collection.name, id), api.schema(collection.name)])
      if (e === null) { setNotFound(true); return }
      flush()
      const stored = unsavedRecords.read(recordKey)
      setEntry(e)
      setForm(s)
      replaceValues(e.data ?? {})
      setIssues(e.validationIssues ?? [])
      setConflict(null)
      setOffer(stored)
      if (stored !== null) {
        setUnsavedStatus(stored.revision === e.revision
          ? 'This browser kept unsaved changes to this entry. Restore them or discard them.'
          : 'This browser kept unsaved changes to this entry, but the entry changed since they were made. Compare both before you choose.')
      }
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) setNotFound(true)
      else setMessage({ kind: 'error', text: `Could not load the entry: ${(err as Error).message}` })
    }
  }
  const loadHistory = async (): Promise<void> => {
    try { setHistory((await api.get<{ history: Snapshot[] }>('/history', { collection: collection.name, id })).history) } catch { setHistory([]) }
  }
  useEffect(() => { if (entry !== null) focusSoon('main h1') }, [entry === null])
  useEffect(() => {
    // Records older than 30 days go.
    unsavedRecords.fresh()
    void load()
    void loadHistory()
    // A closed or hidden tab writes what is still waiting for the debounce.
    addEventListener('pagehide', flush)
    return () => { removeEventListener('pagehide', flush); flush() }
  }, [])
  // Keep the fields that differ from the entry (none removes the record), debounced, with the revision the form
  // was loaded (or last saved) at; not while a stored version waits for the editor's choice (it would be overwritten).
  useEffect(() => {
    if (entry === null || offer !== null) return
    unsavedRecords.later(() => {
      const record = { revision: entry.revision, at: Date.now(), ...diffValues(entry.data ?? {}, values) }
      if (!unsavedRecords.keep(recordKey, hasChanges(record) ? record : null)) setUnsavedStatus('This browser cannot keep your unsaved changes (storage is off or full). Save often.')
    })
  }, [values, offer])

  const restoreUnsaved = (): void => {
    if (entry === null || offer === null) return
    replaceValues(applyRecord(entry.data ?? {}, offer))
    setIssues([])
    setOffer(null)
    setUnsavedStatus('Unsaved changes restored into the form. Save to keep them.')
  }
  const discardUnsaved = (): void => {
    unsavedRecords.forget(recordKey)
    setOffer(null)
    setUnsavedStatus('Unsaved changes discarded.')
  }

  const save = async (expectedRevision: number, resolved?: Record<string, unknown>): Promise<void> => {
    if (entry === null || busy) return
    setBusy(true)
    setMessage(null)
    // What was typed is in storage before the request: a failed save keeps it there.
    flush()
    try {
      // The loaded data merged with the form keeps fields the schema does not list.
      const data = resolved ?? { ...(entry.data ?? {}), ...values }
      if (resolved !== undefined) replaceValues(resolved)
      const drafting = config.drafts === true || entry.draft === true
      const res = await api.mutate({ type: 'put_entry', collection: collection.name, id, data, expectedRevision })
      setEntry({ ...entry, data, revision: res.revision })
      // Saved: nothing is unsaved any more (unless a stored version still waits for a choice).
      unsavedRecords.drop()
      if (offer === null) unsavedRecords.forget(recordKey)
      setIssues([])
      setConflict(null)
      // Refresh the draft flag and the history before saying "Saved.", so what is shown is current.
      const e = await api.entry(collection.name, id).catch(() => null)
      if (e !== null) setEntry(e)
      await loadHistory()
      say('ok', drafting || e?.draft === true ? 'Saved. Your draft holds the change; only you see it until you publish.' : 'Saved. The site\'s files were written: the change is live after the next build.')
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && typeof err.body.currentRevision === 'number') {
        const revision = err.body.currentRevision
        setConflict({ revision, theirs: null })
        void loadHistory()
        focusSoon('#conflict')
        api.entry(collection.name, id).then(theirs => setConflict({ revision, theirs }), () => {})
      } else if (err instanceof ApiError && Array.isArray(err.body.issues)) {
        setIssues(err.body.issues as Issue[])
        say('error', 'Not saved: some fields are not valid. See the messages next to them.')
      } else {
        say('error', `Not saved: ${(err as Error).message}`)
      }
    } finally { setBusy(false) }
  }
  const restore = async (snap: Snapshot): Promise<void> => {
    if (!confirm('Restore this version? The current one is kept in the history.')) return
    try {
      await api.call('POST', '/history', { collection: collection.name, id, ts: snap.ts })
      // Show the restored values first, then say so.
      await load()
      await loadHistory()
      say('ok', 'Restored.')
    } catch (err) { say('error', `Could not restore: ${(err as Error).message}`) }
  }
  const publish = async (): Promise<void> => {
    try {
      setMessage(null)
      setReport(await api.publish({ collection: collection.name, id }))
      await load()
      void loadHistory()
      focusSoon('.report')
    } catch (err) { say('error', `Could not publish: ${(err as Error).message}`) }
  }

  const discard = async (): Promise<void> => {
    if (!confirm('Discard your unpublished changes to this entry?')) return
    try {
      await api.call('DELETE', `/draft?${query({ collection: collection.name, id })}`)
      setReport(null)
      await load()
      say('ok', 'Draft discarded.')
    } catch (err) { say('error', `Could not discard the draft: ${(err as Error).message}`) }
  }

  // Ctrl+S / Cmd+S saves from anywhere on the page (the browser's own "save page" is not wanted here).
  const saveNow = useRef<() => void>(() => {})
  saveNow.current = () => { if (entry !== null) void save(conflict?.revision ?? entry.revision) }
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 's') { e.preventDefault(); saveNow.current() }
    }
    addEventListener('keydown', onKey)
    return () => removeEventListener('keydown', onKey)
  }, [])

  const crumbs = (
    <nav class="crumbs" aria-label="Breadcrumb">
      <a href={`${config.mountPath}/cms`}>Collections</a> / <a href={`${config.mountPath}/cms/${encodeURIComponent(collection.name)}`}>{collection.label}</a> / <span>{id}</span>
    </nav>
  )
  if (notFound) return <section>{crumbs}<p role="alert">There is no entry “{id}” in {collection.label}.</p></section>
  if (entry === null || form === null) return <section>{crumbs}{message !== null ? <p class="error" role="alert">{message.text}</p> : <p>Loading…</p>}</section>
  if (entry.readError !== undefined) return <section>{crumbs}<p role="alert">This entry cannot be read: {entry.readError.message}</p></section>

  const current = entry.data ?? {}
  // The collection schema, plus a Markdown body when the data has one the schema does not list.
  const properties: Record<string, JsonSchema> = { ...(form.schema.properties ?? {}) }
  if (typeof current.body === 'string' && properties.body === undefined) properties.body = { type: 'string', title: 'Body' }
  const fs: JsonSchema = { ...form.schema, type: 'object', properties }
  const drafting = config.drafts === true || entry.draft === true
  // The page the site builds for this entry (the collection's `url` pattern), as published.
  const onSite = collection.url != null ? entryUrl(collection.url, id, current) : null
  return (
    <section class="entry">
      {crumbs}
      <h1>{entryTitle(id, current)} {entry.draft === true && <span class="badge draft">Draft</span>}
        {entry.locale !== undefined && entry.outdatedTranslations?.includes(entry.locale) === true && <> <OutdatedBadge source={Object.keys(entry.translations ?? {})[0] ?? ''} /></>}</h1>
      <p class="muted">{drafting ? 'Your draft' : 'Published on the site'} · revision {entry.revision}</p>
      {onSite !== null && <p><a href={onSite}>View on site</a></p>}
      <TranslationsPanel api={api} info={form.i18n} collection={collection.name} entry={entry} navigate={navigate}
        entryUrl={other => `${config.mountPath}/cms/${encodeURIComponent(collection.name)}/${encodeURIComponent(other)}`} />
      <p class="unsaved-status" role="status" aria-live="polite">{unsavedStatus}</p>
      {offer !== null && (
        <UnsavedOffer offer={offer} revision={entry.revision} schema={fs} saved={current} onRestore={restoreUnsaved} onDiscard={discardUnsaved} />
      )}
      <div class="layout">
        <TranslationSource api={api} collection={collection.name} id={id} />
        <form class="editor" onSubmit={e => { e.preventDefault(); void save(conflict?.revision ?? entry.revision) }}>
          <div class="action-bar" role="group" aria-label="Save and publish">
            <button type="submit" disabled={busy} aria-describedby="save-mode">Save</button>
            {entry.draft === true && <button type="button" class="secondary" onClick={() => { void publish() }}>Publish</button>}
            {entry.draft === true && <button type="button" class="danger" onClick={() => { void discard() }}>Discard draft</button>}
            <span id="save-mode" class="save-mode">
              {drafting
                ? <><span class="badge draft">Draft</span> Saving keeps changes in your draft; only you see them until you publish.</>
                : <>Saving writes the site's files at once (no draft).</>}
            </span>
            <span class="muted small">Ctrl+S saves</span>
            <p id="save-message" tabIndex={-1} class={message === null ? 'message' : message.kind === 'ok' ? 'message ok' : 'message error'} role={message?.kind === 'error' ? 'alert' : 'status'}>{message?.text ?? ''}</p>
          </div>
          {conflict !== null && (
            <ConflictPanel schema={fs} base={current} mine={{ ...current, ...values }} theirs={conflict.theirs} busy={busy}
              onResolve={(data, revision) => { void save(revision, data) }} onReload={() => { void load() }} onOverwrite={revision => { void save(revision) }} />
          )}
          {report !== null && <PublishResult report={report} />}
          {Object.entries(fs.properties ?? {}).map(([k, s]) => (
            <Field key={`${formKey}:${k}`} api={entryApi} name={k} path={k} schema={s} value={values[k]} issues={issues}
              markdown={collection.format === 'md' || collection.format === 'mdx' ? collection.format : undefined}
              onChange={v => {
                setValues(x => ({ ...x, [k]: v }))
                // An issue is about the value that was sent; once the field changes it is stale.
                setIssues(list => list.filter(i => i.path !== k && !i.path.startsWith(k + '.')))
              }} />
          ))}
          {issues.filter(i => !(i.path.split('.')[0]! in (fs.properties ?? {}))).map(i => <p class="issue" role="alert" key={i.path + i.code}>{i.path === '' ? '' : `${i.path}: `}{i.message}</p>)}
        </form>
        <HistoryPanel history={history} current={current} schema={fs} onRestore={snap => { void restore(snap) }} />
      </div>
    </section>
  )
}
