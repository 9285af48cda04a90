/**
 * A form generated from a JSON Schema, recursive for objects and arrays; each change gives the caller a
 * new values object, so what was typed survives errors and conflicts.
 */
import type { JSX } from 'preact'
import type { Api, JsonSchema, Issue } from './api.js'
import { useState } from 'preact/hooks'
import { LazyMarkdownEditor, MediaPicker } from './lazy-parts.js'
import { ChipsField, ObjectItems, RelationField, idFor, relationOf } from './structured-fields.js'

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
    const list = Array.isArray(value) ? value : []
    const itemSchema = schema.items ?? { type: 'string' }
    const itemType = typeOf(itemSchema)
    const blank = (): unknown => itemType === 'object' ? {} : itemType === 'number' || itemType === 'integer' ? 0 : itemType === 'boolean' ? false : itemType === 'array' ? [] : ''
    if (itemType === 'string' && itemSchema.enum === undefined && relationOf(itemSchema) === null) {
      return <ChipsField id={id} label={label} value={value} invalid={invalid} onChange={onChange} issue={<Issues issues={issues} path={path} />} />
    }
    if (itemType === 'object') {
      return (
        <>
          <ObjectItems label={label} list={list} itemSchema={itemSchema} issues={issues} path={path} onChange={onChange}
            renderItem={(item, i, summary) => (
              <Field api={props.api} name={`${name} ${i + 1}`} label={summary} path={`${path}.${i}`} schema={itemSchema} value={item} issues={issues}
                onChange={v => onChange(list.map((x, j) => j === i ? v : x))} />
            )} />
          <Issues issues={issues} path={path} />
        </>
      )
    }
    return (
      <fieldset class="group">
        <legend>{label}</legend>
        {list.map((item, i) => (
          <div class="array-item" key={i}>
            <Field api={props.api} name={`${name} ${i + 1}`} label={`${label} ${i + 1}`} path={`${path}.${i}`} schema={itemSchema} value={item} issues={issues}
              onChange={v => onChange(list.map((x, j) => j === i ? v : x))} />
            <button type="button" class="secondary" aria-label={`Remove ${label} ${i + 1}`}
              onClick={() => onChange(list.filter((_, j) => j !== i))}>Remove</button>
          </div>
        ))}
        <button type="button" class="secondary" onClick={() => onChange([...list, blank()])}>Add {label}</button>
        <Issues issues={issues} path={path} />
      </fieldset>
    )
  }
  const relation = relationOf(schema)
  if (relation !== null && type === 'string') {
    return <RelationField api={props.api} id={id} label={label} collection={relation} value={value} invalid={invalid} described={described} onChange={onChange} issue={<Issues issues={issues} path={path} />} />
  }
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
  } else if (path === 'body' && props.markdown !== undefined && props.api.uploadScope !== null) {
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
