/**
 * The columns of a collection list: the fields a collection names in `listFields` (else its
 * title, and its date when the schema has one), sortable headers that ask the server for that
 * order, each row's values, and the draft-state filter.
 */
import type { JSX } from 'preact'
import type { Entry, JsonSchema } from './api.js'
import { fieldLabel } from './schema-form.js'

/** One column: a field and its heading. */
interface ListColumn {
  field: string
  label: string
}

/** The list's order: none (the collection's own), or a field and direction. */
export interface ListSort {
  field: string
  order: 'asc' | 'desc'
}

/** Which entries the list shows by this editor's draft state. */
export type DraftFilter = 'all' | 'only' | 'none'

/** The columns of a collection: `title` first (the link), then the other named fields. */
export function listColumns (listFields: string[] | null, schema: JsonSchema | null): ListColumn[] {
  const props = schema?.properties ?? {}
  const fields = listFields ?? ['title', ...(Object.hasOwn(props, 'date') ? ['date'] : [])]
  const ordered = ['title', ...fields.filter(f => f !== 'title')]
  return ordered.map(field => ({ field, label: fieldLabel(field, (Object.hasOwn(props, field) ? props[field] : undefined) ?? {}) }))
}

/**
 * Sort buttons heading the columns; pressing one sorts by it (ascending), pressing it again
 * reverses the order.
 */
export function SortHeader ({ columns, sort, onSort }: { columns: ListColumn[], sort: ListSort | null, onSort: (sort: ListSort) => void }): JSX.Element {
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

/** An entry's values for the columns after the title (each labelled, for narrow screens). */
export function EntryCells ({ entry, columns }: { entry: Entry, columns: ListColumn[] }): JSX.Element {
  return (
    <>
      {columns.slice(1).map(c => (
        <span key={c.field} class="col" data-label={c.label}>{cellText(c.field === 'id' ? entry.id : entry.data?.[c.field])}</span>
      ))}
    </>
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

/** The draft-state filter. */
export function DraftFilterControl ({ value, onChange }: { value: DraftFilter, onChange: (value: DraftFilter) => void }): JSX.Element {
  return (
    <span class="draft-filter">
      <label for="draft-filter">Show</label>
      <select id="draft-filter" value={value} onChange={e => onChange((e.currentTarget as HTMLSelectElement).value as DraftFilter)}>
        <option value="all">All entries</option>
        <option value="only">My drafts only</option>
        <option value="none">Without my drafts</option>
      </select>
    </span>
  )
}
