/**
 * A form generated from a JSON Schema, recursive for objects and arrays; each change gives the caller a
 * new values object, so what was typed survives errors and conflicts. Structured values get their own
 * controls: a relation (`x-cms-relation`) as a search picker, strings as chips, array items reordered
 * (buttons or drag) and collapsed.
 */
import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import { ApiError, type Api, type Entry, type JsonSchema, type Issue } from './api.js'
import { LazyMarkdownEditor, MediaPicker } from './lazy-parts.js'
import { entryTitle, useDebouncedLoad } from './types.js'

const IMAGE_NAMES = new Set(['image', 'cover', 'avatar', 'thumbnail', 'photo', 'logo'])

/** The label of a field: its schema title, else its name capitalised. */
export function fieldLabel (name: string, schema: JsonSchema): string {
  if (typeof schema.title === 'string' && schema.title !== '') return schema.title
  const words = name.replace(/[_-]+/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2')
  return words.charAt(0).toUpperCase() + words.slice(1)
}

/** A schema's main type. */
function typeOf (schema: JsonSchema): string {
  const t = Array.isArray(schema.type) ? schema.type.find(x => x !== 'null') : schema.type
  if (typeof t === 'string') return t
  return schema.properties !== undefined ? 'object' : 'string'
}

/** Whether a string field holds an image URL. */
function isImage (name: string, schema: JsonSchema): boolean {
  if (IMAGE_NAMES.has(name.toLowerCase())) return true
  const hint = `${String(schema.contentMediaType ?? '')} ${String(schema['x-widget'] ?? '')} ${String(schema.description ?? '')}`
  return schema.format === 'uri' && /image/i.test(hint)
}

/** Props shared by every field. */
interface FieldProps {
  api: Api
  name: string
  path: string
  schema: JsonSchema
  value: unknown
  issues: Issue[]
  onChange: (value: unknown) => void
  label?: string
  /** The entry format when the body is Markdown (`md` or `mdx`): the body gets the Markdown editor. */
  markdown?: 'md' | 'mdx'
  /** Whether the schema requires the field (marked, and `aria-required`). */
  required?: boolean
}

/** The inline messages for one field, if any. */
function Issues ({ issues, path }: { issues: Issue[], path: string }): JSX.Element | null {
  const mine = issues.filter(i => i.path === path)
  if (mine.length === 0) return null
  return <p class="issue" id={idFor(path) + '-issue'} role="alert">{mine.map(i => i.message).join('; ')}</p>
}

/** The control for one value of any type. */
export function Field (props: FieldProps): JSX.Element {
  const { name, path, schema, value, issues, onChange } = props
  const label = props.label ?? fieldLabel(name, schema)
  const id = idFor(path)
  const type = typeOf(schema)
  const invalid = issues.some(i => i.path === path)
  const described = invalid ? id + '-issue' : undefined

  if (type === 'object') {
    const obj = (value !== null && typeof value === 'object' && !Array.isArray(value)) ? value as Record<string, unknown> : {}
    return (
      <fieldset class="group">
        <legend>{label}</legend>
        {Object.entries(schema.properties ?? {}).map(([k, s]) => (
          <Field key={k} api={props.api} name={k} path={`${path}.${k}`} schema={s} value={obj[k]} issues={issues}
            onChange={v => onChange({ ...obj, [k]: v })} />
        ))}
        <Issues issues={issues} path={path} />
      </fieldset>
    )
  }
  if (type === 'array') {
    const itemSchema = schema.items ?? { type: 'string' }
    if (typeOf(itemSchema) === 'string' && itemSchema.enum === undefined && relationOf(itemSchema) === null) return <ChipsField {...props} label={label} />
    return <ArrayItems {...props} label={label} />
  }
  const relation = relationOf(schema)
  if (relation !== null && type === 'string') return <RelationField {...props} label={label} collection={relation} />
  if (type === 'boolean') {
    return (
      <div class="field checkbox">
        <input id={id} type="checkbox" checked={value === true} aria-invalid={invalid} aria-describedby={described}
          onChange={e => onChange((e.currentTarget as HTMLInputElement).checked)} />
        <label for={id}>{label}</label>
        <Issues issues={issues} path={path} />
      </div>
    )
  }
  // The value typed or chosen, as `parse` makes it.
  const changeTo = (parse: (raw: string) => unknown) => (e: Event): void => onChange(parse((e.currentTarget as HTMLInputElement).value))
  let control: JSX.Element
  if (schema.enum !== undefined) {
    control = (
      <select id={id} aria-invalid={invalid} aria-describedby={described} value={value === undefined ? '' : String(value)}
        onChange={changeTo(raw => schema.enum?.find(x => String(x) === raw) ?? raw)}>
        {value === undefined && <option value="">(none)</option>}
        {schema.enum.map(x => <option key={String(x)} value={String(x)}>{String(x)}</option>)}
      </select>
    )
  } else if (type === 'number' || type === 'integer') {
    control = (
      <input id={id} type="number" step={type === 'integer' ? 1 : 'any'} aria-invalid={invalid} aria-describedby={described}
        value={typeof value === 'number' ? String(value) : ''} onInput={changeTo(raw => raw === '' ? undefined : Number(raw))} />
    )
  } else if (path === 'body' && props.markdown !== undefined) {
    control = (
      <LazyMarkdownEditor api={props.api} id={id} label={label} value={typeof value === 'string' ? value : ''} mdx={props.markdown === 'mdx'}
        onChange={v => onChange(v)} />
    )
  } else if (path === 'body' || schema.format === 'markdown' || (typeof schema.maxLength === 'number' ? schema.maxLength > 200 : /description|summary|excerpt|bio|text|content/i.test(name))) {
    control = (
      <textarea id={id} rows={path === 'body' ? 18 : 4} class={path === 'body' ? 'body' : undefined} aria-invalid={invalid} aria-describedby={described}
        value={typeof value === 'string' ? value : ''} onInput={changeTo(raw => raw)} />
    )
  } else if (isImage(name, schema)) {
    return <ImageField {...props} label={label} />
  } else {
    const inputType = (schema.format === 'date' ? 'date' : schema.format === 'email' ? 'email' : 'text') as 'text'
    control = (
      <input id={id} type={inputType} aria-invalid={invalid} aria-describedby={described}
        value={value === undefined || value === null ? '' : String(value)}
        // An emptied date or email is "no value", not an empty string that fails its format.
        onInput={changeTo(raw => raw === '' && inputType !== 'text' ? undefined : raw)} />
    )
  }
  return (
    <div class="field">
      <label for={id}>{label}{props.required === true && <span class="req"> (required)</span>}</label>
      {control}
      <Issues issues={issues} path={path} />
    </div>
  )
}

/** An image field: a URL input, an upload input and a preview. */
function ImageField (props: FieldProps & { label: string }): JSX.Element {
  const { path, value, issues, onChange, label, api } = props
  const id = idFor(path)
  const url = typeof value === 'string' ? value : ''
  const [picking, setPicking] = useState(false)
  const [status, setStatus] = useState('')
  const upload = async (e: Event): Promise<void> => {
    const file = (e.currentTarget as HTMLInputElement).files?.[0]
    if (file === undefined) return
    try {
      setStatus('Uploading…')
      onChange((await api.upload(file)).url)
      setStatus('Uploaded.')
    } catch (err) { setStatus(`Upload failed: ${(err as Error).message}`) }
  }
  return (
    <div class="field image">
      <label for={id}>{label}</label>
      <input id={id} type="text" value={url} onInput={e => onChange((e.currentTarget as HTMLInputElement).value)} />
      <label for={id + '-file'} class="sub">Upload {label}</label>
      <input id={id + '-file'} type="file" accept="image/*" onChange={e => { void upload(e) }} />
      <button type="button" class="secondary choose-media" onClick={() => setPicking(true)}>Choose {label} from the media library</button>
      <p id={id + '-status'} class="status" role="status">{status}</p>
      {picking && (
        <MediaPicker api={api} purpose={label} onClose={() => setPicking(false)} onPick={(file, picked) => {
          onChange(picked)
          setStatus(`Chose ${file.name}.`)
          document.getElementById(id)?.focus()
        }} />
      )}
      {url !== '' && <img class="preview" src={url} alt={`${label} preview`} />}
      <Issues issues={issues} path={path} />
    </div>
  )
}

/** The DOM id of a field path. */
const idFor = (path: string): string => 'f-' + path.replace(/[^A-Za-z0-9_-]/g, '_')

/** The collection a property relates to, or null. */
function relationOf (schema: JsonSchema): string | null {
  const rel = schema['x-cms-relation']
  if (rel === null || typeof rel !== 'object') return null
  const c = (rel as { collection?: unknown }).collection
  return typeof c === 'string' && c !== '' ? c : null
}

/** A relation field: a search box with the matching entries, and the chosen entry. */
function RelationField (props: FieldProps & { label: string, collection: string }): JSX.Element {
  const { api, path, label, collection, issues, onChange } = props
  const id = idFor(path)
  const invalid = issues.some(i => i.path === path)
  const value = typeof props.value === 'string' ? props.value : ''
  const [q, setQ] = useState('')
  const [hits, setHits] = useState<Entry[]>([])
  const [chosen, setChosen] = useState<{ id: string, title: string | null } | null>(null)
  useDebouncedLoad(async () => value === '' ? null : { id: value, title: entryTitle(value, (await api.entry(collection, value))?.data) }, setChosen,
    err => setChosen(err instanceof ApiError && (err.status === 404 || err.status === 400) ? { id: value, title: null } : null), 0, [value])
  useDebouncedLoad(async () => q.trim() === '' ? [] : (await api.entries(collection, { q, pageSize: 8 })).entries, setHits, () => setHits([]), q.trim() === '' ? 0 : 150, [q])
  return (
    <div class="field relation">
      <label for={id}>{label}</label>
      <p class="muted small" id={id + '-now'}>
        {value === '' ? 'None chosen.' : chosen === null ? value : chosen.title === null ? '' : <>Chosen: <strong>{chosen.title}</strong> ({value})</>}
      </p>
      {chosen !== null && chosen.title === null && <p class="issue" role="alert">There is no entry “{value}” in {collection}. Choose another.</p>}
      <input id={id} type="search" value={q} placeholder={`Search ${collection}`} aria-invalid={invalid} aria-describedby={invalid ? `${id}-now ${id}-issue` : id + '-now'}
        onInput={e => setQ((e.currentTarget as HTMLInputElement).value)} />
      {hits.length > 0 && (
        <ul class="relation-hits" aria-label={`Entries matching “${q}”`}>
          {hits.map(h => (
            <li key={h.id}><button type="button" class="secondary" onClick={() => { onChange(h.id); setQ(''); setHits([]) }}>Choose {entryTitle(h.id, h.data)}</button></li>
          ))}
        </ul>
      )}
      {value !== '' && <button type="button" class="secondary" onClick={() => onChange(undefined)}>Clear {label}</button>}
      <Issues issues={issues} path={path} />
    </div>
  )
}

/** A list of strings as chips with Remove, and a box that adds one on Enter. */
function ChipsField ({ path, label, value, issues, onChange }: FieldProps & { label: string }): JSX.Element {
  const id = idFor(path)
  const list = Array.isArray(value) ? value.map(String) : []
  const [draft, setDraft] = useState('')
  const add = (): void => {
    const words = draft.split(',').map(w => w.trim()).filter(w => w !== '' && !list.includes(w))
    if (words.length > 0) onChange([...list, ...words])
    setDraft('')
  }
  return (
    <div class="field chips">
      <label for={id}>{label}</label>
      <ul class="chip-list" aria-label={label}>
        {list.map((w, i) => (
          <li key={w + i} class="chip">{w}<button type="button" class="chip-remove" aria-label={`Remove ${w}`} onClick={() => onChange(list.filter((_, j) => j !== i))}>×</button></li>
        ))}
      </ul>
      <input id={id} type="text" value={draft} aria-invalid={issues.some(i => i.path === path)} aria-describedby={id + '-help'} placeholder="Type and press Enter"
        onInput={e => setDraft((e.currentTarget as HTMLInputElement).value)}
        onKeyDown={e => { if (e.key === 'Enter' || e.key === ',') { e.preventDefault(); add() } }}
        onBlur={add} />
      <p id={id + '-help'} class="muted small">Enter or a comma adds; × removes.</p>
      <Issues issues={issues} path={path} />
    </div>
  )
}

/** The summary of an array item: an object's first non-empty text field, else `fallback`. */
function itemSummary (item: unknown, schema: JsonSchema, fallback: string): string {
  if (item === null || typeof item !== 'object') return fallback
  for (const [k, s] of Object.entries(schema.properties ?? {})) {
    const v = (item as Record<string, unknown>)[k]
    if (s.enum === undefined && typeof v === 'string' && v.trim() !== '') return v.length > 60 ? v.slice(0, 57) + '…' : v
  }
  for (const v of Object.values(item as Record<string, unknown>)) if (typeof v === 'string' && v.trim() !== '') return v
  return fallback
}

/** An array's items, each collapsible, movable by buttons and by drag. */
function ArrayItems ({ api, name, label, schema, value, issues, path, onChange }: FieldProps & { label: string }): JSX.Element {
  const itemSchema = schema.items ?? { type: 'string' }
  const itemType = typeOf(itemSchema)
  const list = Array.isArray(value) ? value : []
  // The value of an added item.
  const blank = itemType === 'object' ? {} : itemType === 'number' || itemType === 'integer' ? 0 : itemType === 'boolean' ? false : itemType === 'array' ? [] : ''
  const [closed, setClosed] = useState<Set<number>>(new Set())
  const [dragging, setDragging] = useState<number | null>(null)
  const move = (from: number, to: number): void => {
    if (to < 0 || to >= list.length || from === to) return
    const next = [...list]
    const [x] = next.splice(from, 1)
    next.splice(to, 0, x)
    onChange(next)
    // Collapsed state follows the moved item.
    setClosed(c => new Set([...c].map(i => i === from ? to : from < to && i > from && i <= to ? i - 1 : from > to && i >= to && i < from ? i + 1 : i)))
    requestAnimationFrame(() => document.getElementById(`${idFor(path)}-item-${to}`)?.querySelector<HTMLElement>('.item-move-' + (to > from ? 'down' : 'up'))?.focus())
  }
  return (
    <fieldset class="group items">
      <legend>{label}</legend>
      {list.map((item, i) => {
        const summary = itemSummary(item, itemSchema, `${label} ${i + 1}`)
        const open = !closed.has(i)
        const bad = issues.some(x => x.path === `${path}.${i}` || x.path.startsWith(`${path}.${i}.`))
        return (
          <div key={i} id={`${idFor(path)}-item-${i}`} class={`array-item object-item${dragging === i ? ' dragging' : ''}${bad ? ' invalid' : ''}`} draggable
            onDragStart={e => { setDragging(i); e.dataTransfer?.setData('text/plain', String(i)) }}
            onDragEnd={() => setDragging(null)}
            onDragOver={e => e.preventDefault()}
            onDrop={e => { e.preventDefault(); const from = Number(e.dataTransfer?.getData('text/plain')); if (Number.isInteger(from)) move(from, i); setDragging(null) }}>
            <div class="item-head">
              <span class="drag-handle" aria-hidden="true" title="Drag to reorder">⠿</span>
              <button type="button" class="item-toggle" aria-expanded={open} aria-controls={`${idFor(path)}-body-${i}`}
                onClick={() => setClosed(c => { const n = new Set(c); if (open) n.add(i); else n.delete(i); return n })}>
                {summary}
              </button>
              <button type="button" class="icon-btn item-move-up" aria-label={`Move up: ${summary}`} disabled={i === 0} onClick={() => move(i, i - 1)}>↑</button>
              <button type="button" class="icon-btn item-move-down" aria-label={`Move down: ${summary}`} disabled={i === list.length - 1} onClick={() => move(i, i + 1)}>↓</button>
              <button type="button" class="secondary" aria-label={`Remove ${summary}`} onClick={() => onChange(list.filter((_, j) => j !== i))}>Remove</button>
            </div>
            <div id={`${idFor(path)}-body-${i}`} hidden={!open}>
              <Field api={api} name={`${name} ${i + 1}`} label={summary} path={`${path}.${i}`} schema={itemSchema} value={item} issues={issues}
                onChange={v => onChange(list.map((x, j) => j === i ? v : x))} />
            </div>
          </div>
        )
      })}
      <button type="button" class="secondary" onClick={() => onChange([...list, blank])}>Add {label}</button>
      <Issues issues={issues} path={path} />
    </fieldset>
  )
}
