/**
 * A collection's "New" form: the title first, the id derived as a slug until typed, then the other
 * fields; required fields are checked before sending, and a taken id gets a free one offered.
 */
import type { JSX } from 'preact'
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { ApiError, type Api, type Issue, type JsonSchema } from './api.js'
import { Field, fieldLabel } from './schema-form.js'
import { focusSoon, idProblem, slugOf, type Navigate, type StudioCollection, type StudioConfig } from './types.js'

interface Props { api: Api, config: StudioConfig, collection: StudioCollection, navigate: Navigate, onCancel: () => void }

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

/** The form creating a new entry. */
export function NewEntry ({ api, config, collection, navigate, onCancel }: Props): JSX.Element {
  const [schema, setSchema] = useState<JsonSchema | null>(null)
  const [template, setTemplate] = useState<Record<string, unknown>>({})
  const [values, setValues] = useState<Record<string, unknown>>({})
  const [id, setId] = useState('')
  // Once the editor types an id, the title no longer changes it.
  const idTyped = useRef(false)
  const [issues, setIssues] = useState<Issue[]>([])
  const [taken, setTaken] = useState<{ id: string, free: string } | null>(null)
  const [error, setError] = useState('')
  const [busy, setBusy] = useState(false)
  const entryApi = useMemo(() => api.forEntry(collection.name, id === '' ? 'new' : id), [api, collection.name, id])
  useEffect(() => {
    api.schema(collection.name).then(r => { setSchema(r.schema); setTemplate(r.template ?? {}); setValues(r.template ?? {}) },
      (err: Error) => setError(`Could not load the form: ${err.message}`))
  }, [])
  useEffect(() => { if (schema !== null) focusSoon('#new-entry input') }, [schema])

  const titleKey = collection.titleField ?? (schema?.properties?.title !== undefined ? 'title' : null)
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
    if (schema === null) return
    setError('')
    setTaken(null)
    const trimmed = id.trim().normalize('NFC')
    const problems = formIssues(schema, values)
    const idIssue = idProblem(trimmed, collection.nested)
    if (idIssue !== '') problems.push({ path: '#id', code: 'id', message: idIssue })
    setIssues(problems)
    if (problems.length > 0) { focusSoon(`[aria-invalid=true]`); return }
    setBusy(true)
    try {
      if (await exists(trimmed)) {
        setTaken({ id: trimmed, free: await freeId(trimmed) })
        focusSoon('#new-id-taken')
        return
      }
      const data: Record<string, unknown> = { ...template, ...values }
      // An empty date, email or choice left as the template gave it is "no value", not '' that fails its format.
      for (const [k, p] of Object.entries(schema.properties ?? {})) {
        if (data[k] === '' && (p.format !== undefined || p.enum !== undefined)) delete data[k]
      }
      if ((collection.format === 'md' || collection.format === 'mdx') && typeof data.body !== 'string') data.body = ''
      await api.mutate({ type: 'put_entry', collection: collection.name, id: trimmed, data })
      navigate(`${config.mountPath}/cms/${encodeURIComponent(collection.name)}/${encodeURIComponent(trimmed)}`)
    } catch (err) {
      if (err instanceof ApiError && Array.isArray(err.body.issues)) {
        setIssues(err.body.issues as Issue[])
        setError('Not created: some fields are not valid. See the messages next to them.')
      } else setError(`Could not create “${trimmed}”: ${(err as Error).message}`)
      focusSoon('#new-entry [role=alert]')
    } finally { setBusy(false) }
  }

  if (schema === null) return <section class="new-entry" id="new-entry">{error !== '' ? <p class="error" role="alert">{error}</p> : <p>Loading…</p>}</section>
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
        if (derives) setId(slugOf(v))
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
