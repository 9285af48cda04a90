/**
 * Controls for structured values: a relation (`x-cms-relation`) as a search picker, strings as chips,
 * object items reordered (buttons or drag) and collapsed.
 */
import type { ComponentChildren, JSX } from 'preact'
import { useState } from 'preact/hooks'
import { ApiError, type Api, type Entry, type Issue, type JsonSchema } from './api.js'
import { entryTitle, useDebouncedLoad } from './types.js'

/** The DOM id of a field path. */
export const idFor = (path: string): string => 'f-' + path.replace(/[^A-Za-z0-9_-]/g, '_')

/** The collection a property relates to, or null. */
export function relationOf (schema: JsonSchema): string | null {
  const rel = schema['x-cms-relation']
  if (rel === null || typeof rel !== 'object') return null
  const c = (rel as { collection?: unknown }).collection
  return typeof c === 'string' && c !== '' ? c : null
}

interface RelationProps { api: Api, id: string, label: string, collection: string, value: unknown, invalid: boolean, described?: string, onChange: (v: unknown) => void, issue: ComponentChildren }

/** A relation field: a search box with the matching entries, and the chosen entry. */
export function RelationField (props: RelationProps): JSX.Element {
  const { api, id, label, collection, onChange } = props
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
      <input id={id} type="search" value={q} placeholder={`Search ${collection}`} aria-invalid={props.invalid} aria-describedby={[id + '-now', props.described].filter(Boolean).join(' ')}
        onInput={e => setQ((e.currentTarget as HTMLInputElement).value)} />
      {hits.length > 0 && (
        <ul class="relation-hits" aria-label={`Entries matching “${q}”`}>
          {hits.map(h => (
            <li key={h.id}><button type="button" class="secondary" onClick={() => { onChange(h.id); setQ(''); setHits([]) }}>Choose {entryTitle(h.id, h.data)}</button></li>
          ))}
        </ul>
      )}
      {value !== '' && <button type="button" class="secondary" onClick={() => onChange(undefined)}>Clear {label}</button>}
      {props.issue}
    </div>
  )
}

interface ChipsProps { id: string, label: string, value: unknown, invalid: boolean, onChange: (v: unknown) => void, issue: ComponentChildren }

/** A list of strings as chips with Remove, and a box that adds one on Enter. */
export function ChipsField ({ id, label, value, invalid, onChange, issue }: ChipsProps): JSX.Element {
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
      <input id={id} type="text" value={draft} aria-invalid={invalid} aria-describedby={id + '-help'} placeholder="Type and press Enter"
        onInput={e => setDraft((e.currentTarget as HTMLInputElement).value)}
        onKeyDown={e => { if (e.key === 'Enter' || e.key === ',') { e.preventDefault(); add() } }}
        onBlur={add} />
      <p id={id + '-help'} class="muted small">Enter or a comma adds; × removes.</p>
      {issue}
    </div>
  )
}

/** The summary of an object item: its first non-empty text field, else `fallback`. */
function itemSummary (item: unknown, schema: JsonSchema, fallback: string): string {
  if (item === null || typeof item !== 'object') return fallback
  for (const [k, s] of Object.entries(schema.properties ?? {})) {
    const v = (item as Record<string, unknown>)[k]
    if (s.enum === undefined && typeof v === 'string' && v.trim() !== '') return v.length > 60 ? v.slice(0, 57) + '…' : v
  }
  for (const v of Object.values(item as Record<string, unknown>)) if (typeof v === 'string' && v.trim() !== '') return v
  return fallback
}

interface ItemsProps {
  label: string
  list: unknown[]
  itemSchema: JsonSchema
  issues: Issue[]
  path: string
  onChange: (v: unknown) => void
  renderItem: (item: unknown, i: number, summary: string) => JSX.Element
}

/** An array's object items, each collapsible, movable by buttons and by drag. */
export function ObjectItems ({ label, list, itemSchema, issues, path, onChange, renderItem }: ItemsProps): JSX.Element {
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
            <div id={`${idFor(path)}-body-${i}`} hidden={!open}>{renderItem(item, i, summary)}</div>
          </div>
        )
      })}
      <button type="button" class="secondary" onClick={() => onChange([...list, {}])}>Add {label}</button>
    </fieldset>
  )
}
