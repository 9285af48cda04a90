/**
 * `x-cms-relation: { collection }` on a string property: the value names an entry of that
 * collection. A write whose relation names no entry (in base, or the editor's own draft) is refused
 * with a schema issue, unless the stored data already held that same value (stored issues never
 * block a write).
 */
import type { ValidationIssue } from '../errors.js'
import type { EntryData } from '../content/formats.js'
import type { Identity } from '../config.js'
import type { Services } from '../services.js'

/** The part of a JSON Schema a relation lives in. */
interface RelationSchema {
  properties?: Record<string, RelationSchema>
  items?: RelationSchema
  'x-cms-relation'?: { collection?: unknown }
}

/** One relation value found in data: where, which collection, which id. */
interface RelationValue { path: string, collection: string, id: string }

/** The relation values of data under a schema, collected into `out` (objects and arrays walked, depth-first). */
function relationValues (schema: RelationSchema | undefined, value: unknown, path: string, out: RelationValue[] = []): RelationValue[] {
  if (schema === undefined || value === null || value === undefined) return out
  const rel = schema['x-cms-relation']
  if (rel !== undefined && typeof rel === 'object' && rel !== null && typeof rel.collection === 'string') {
    if (typeof value === 'string' && value !== '') out.push({ path, collection: rel.collection, id: value })
    return out
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => relationValues(schema.items, item, path === '' ? String(i) : `${path}.${i}`, out))
  } else if (typeof value === 'object' && schema.properties !== undefined) {
    for (const [k, s] of Object.entries(schema.properties)) {
      if (Object.hasOwn(value, k)) relationValues(s, (value as Record<string, unknown>)[k], path === '' ? k : `${path}.${k}`, out)
    }
  }
  return out
}

/**
 * The relation issues a write from `before` (undefined for a new entry) to `data` would add: one
 * per relation naming no entry (the writing editor's drafts count) that `before` did not hold.
 */
export async function relationIssues (services: Services, identity: Identity, schema: unknown, before: EntryData | undefined, data: EntryData): Promise<ValidationIssue[]> {
  if (schema === null || typeof schema !== 'object') return []
  const values = relationValues(schema as RelationSchema, data, '')
  if (values.length === 0) return []
  const known = new Set(relationValues(schema as RelationSchema, before, '').map(v => `${v.path}\u0000${v.id}`))
  const issues: ValidationIssue[] = []
  for (const v of values) {
    if (known.has(`${v.path}\u0000${v.id}`)) continue
    if (await entryExists(services, identity, v.collection, v.id)) continue
    issues.push({ path: v.path, code: 'relation', message: `There is no entry "${v.id}" in ${v.collection}` })
  }
  return issues
}

async function entryExists (services: Services, identity: Identity, collection: string, id: string): Promise<boolean> {
  let index
  try { index = await services.content.index(collection) } catch { return false }
  try { index.checkId(id) } catch { return false }
  const draft = await services.drafts.get(identity.id, collection, id).catch(() => null)
  if (draft !== null) return draft.kind === 'put'
  const entry = await index.get(id).catch(() => null)
  return entry !== null
}
