/**
 * The one write path of content, under the entry's lock: read the entry as the editor sees it, check
 * the revision, refuse new issues, then write base storage (snapshot first) or the editor's draft.
 */
import { readFile } from 'node:fs/promises'
import { isDeepStrictEqual } from 'node:util'
import { BadRequestError, LimitExceededError, RevisionConflictError, SchemaValidationError, UnreadableEntryError, type ValidationIssue } from '../errors.js'
import type { EntryData } from '../content/formats.js'
import { serializeEntryText } from '../content/large-entry-text.js'
import { assertDataDepth } from '../content/data-depth.js'
import { formatOfFile, removeEntryFile } from '../storage/entry-paths.js'
import type { CollectionIndex, IndexedEntry } from '../storage/collection-index.js'
import type { FileWrite, Snapshot, SnapshotAction } from '../storage/history-store.js'
import type { DraftRecord } from '../storage/draft-store.js'
import type { Services } from '../services.js'
import type { Identity } from '../config.js'
import type { CommandContext } from './command-context.js'
import { SchemaCompileError } from '../content/thread-schema-compiler.js'
import type { JsonSchema, Validator } from '../content/schema-tools.js'
import { schemaRefusal } from '../storage/collection-registry.js'

/** The entry as the editor sees it (their draft over base), under the lock. */
export interface CurrentEntry {
  exists: boolean
  data?: EntryData
  /** The revision the editor sees (the draft's when they have one; the last one when deleted). */
  revision: number
  /** The editor's draft of this entry, if any. */
  draft: DraftRecord | null
  /** The base entry, if it exists. */
  base: IndexedEntry | null
}

/** What a change computes: the new data (null deletes) and, for block edits, their record. */
export interface ChangeOutcome {
  data: EntryData | null
  markdown?: DraftRecord['markdown']
}

export interface ChangeEntryInput {
  collection: string
  id: string
  expectedRevision?: number | null
  /** The history action recorded for the replaced state (base writes). */
  action: SnapshotAction
  /**
   * 'auto' drafts under a policy; 'draft' and 'base' always do that; 'follow' is 'auto' that also
   * drafts when the editor has a draft of the entry (a Studio save after an md_block edit).
   */
  target?: 'auto' | 'follow' | 'draft' | 'base'
  /** May the change replace an unreadable file? (put_entry with a matching expectedRevision) */
  replacesUnreadable?: boolean
  /** Computes the change from the entry as the editor sees it, under the lock; throws to refuse. */
  apply: (current: CurrentEntry) => ChangeOutcome | Promise<ChangeOutcome>
}

/**
 * Applies one change to one entry as the context's editor.
 * @param ctx the instance and the editor
 * @param input what to change and how
 * @returns the revision the editor sees afterwards
 */
export async function changeEntry (ctx: CommandContext, input: ChangeEntryInput): Promise<{ revision: number }> {
  const { services, identity } = ctx
  const index = await services.content.index(input.collection)
  const toDraft = input.target === 'draft' || (input.target !== 'base' && services.auth.authorizer.active) ||
    (input.target === 'follow' && await services.drafts.get(identity.id, input.collection, input.id) !== null)
  const key = toDraft ? `draft:${identity.id}:${input.collection}/${input.id}` : `entry:${input.collection}/${input.id}`
  return await services.locks.run(key, async () => {
    // A base write checks the entry's path before the read, which then need not check the folder.
    const checked = toDraft ? null : index.fileOf(input.id)
    const base = await index.get(input.id, { folderChecked: checked !== null })
    const draft = toDraft ? await services.drafts.get(identity.id, input.collection, input.id) : null
    const current = currentView(index, input.id, base, draft)
    const expected = input.expectedRevision ?? undefined
    if (expected !== undefined && expected !== current.revision) throw new RevisionConflictError(current.revision)
    if (draft === null && base?.readError !== undefined && !(input.replacesUnreadable === true && expected !== undefined)) {
      throw new UnreadableEntryError('Stored entry cannot be read; replace it with put_entry and its expectedRevision', {
        collection: input.collection, id: input.id, readError: base.readError, currentRevision: current.revision
      })
    }
    const outcome = await input.apply(current)
    let issues: ValidationIssue[] | undefined
    if (outcome.data !== null) {
      assertDataDepth(outcome.data)
      const validation = await checkIssues(current.data, services, index, outcome.data)
      const added = [...validation.added, ...await relationIssues(services, identity, index.collection.schema, current.data, outcome.data)]
      if (added.length > 0) throw new SchemaValidationError(added)
      issues = validation.issues
    }
    if (toDraft) return await writeDraft(ctx, input, index, current, outcome)
    // The read may have found the entry at another path than `checked`, which is then checked in turn.
    const file = checked !== null && index.pathOf(input.id) === checked ? checked : index.fileOf(input.id)
    return await index.serviceChange(input.id, async () => await replaceBase(ctx, input, index, file, base, current, outcome, issues))
  })
}

function currentView (index: CollectionIndex, id: string, base: IndexedEntry | null, draft: DraftRecord | null): CurrentEntry {
  if (draft !== null && draft.kind === 'put') {
    return { exists: true, data: draft.data, revision: draft.revision, draft, base }
  }
  if (draft !== null) return { exists: false, revision: draft.revision, draft, base }
  return { exists: base !== null, data: base?.data, revision: base?.revision ?? index.lastRevision(id), draft: null, base }
}

async function replaceBase (
  ctx: CommandContext, input: ChangeEntryInput, index: CollectionIndex, file: string,
  base: IndexedEntry | null, current: CurrentEntry, outcome: ChangeOutcome, issues?: ValidationIssue[]
): Promise<{ revision: number }> {
  const { services } = ctx
  if (outcome.data === null) {
    if (base === null) return { revision: current.revision }
    await recordReplaced(ctx, input, base)
    await removeEntryFile(index.collection.dir, file)
    const revision = await index.recordDelete(input.id)
    await services.committer.track([services.relativePath(file)])
    return { revision }
  }
  // The text the read under the lock had is the one its data came from: neither read nor parsed again.
  const known = base?.text !== undefined && base.file === file && base.readError === undefined ? base : null
  let previousText = known?.text
  if (known === null && base !== null && base.readError === undefined) {
    try { previousText = await readFile(file, 'utf8') } catch {}
  }
  const text = await serializeEntryText(formatOfFile(file, index.collection.format), outcome.data, previousText, { frontmatter: index.collection.frontmatter, previousData: known?.data })
  if (text === previousText) return { revision: current.revision }
  // The new file replaces the entry only once the snapshot of the state it replaces is durable.
  await recordReplaced(ctx, input, base, [{ path: file, data: text }])
  const revision = await index.recordWrite(input.id, outcome.data, { file, text, issues })
  await services.committer.track([services.relativePath(file)])
  return { revision }
}

async function writeDraft (
  ctx: CommandContext, input: ChangeEntryInput, index: CollectionIndex, current: CurrentEntry, outcome: ChangeOutcome
): Promise<{ revision: number }> {
  const previous = current.draft
  if (outcome.data === null && !current.exists) return { revision: current.revision }
  // A field save that leaves the data as the editor sees it makes no draft revision either.
  if (outcome.data !== null && outcome.markdown === undefined && current.data !== undefined && isDeepStrictEqual(current.data, outcome.data)) {
    return { revision: current.revision }
  }
  const revision = current.revision + 1
  const record: DraftRecord = {
    version: 1,
    collection: input.collection,
    id: input.id,
    kind: outcome.data === null ? 'delete' : 'put',
    ...(outcome.data === null ? {} : { data: outcome.data }),
    baseRevision: previous?.baseRevision ?? (current.base?.revision ?? index.lastRevision(input.id)),
    revision,
    updatedAt: Date.now(),
    ...(outcome.markdown !== undefined ? { markdown: outcome.markdown } : {}),
    ...(outcome.markdown === undefined && outcome.data !== null ? { fieldsEdited: true } : {}),
    ...(previous?.fieldsEdited === true ? { fieldsEdited: true } : {})
  }
  await ctx.services.drafts.put(ctx.identity.id, [record])
  return { revision }
}

async function recordReplaced (ctx: CommandContext, input: ChangeEntryInput, entry: IndexedEntry | null, files: FileWrite[] = []): Promise<void> {
  // A new entry has nothing to keep: the files alone.
  const snapshots = entry?.data === undefined
    ? []
    : [replacedSnapshot(input, { data: entry.data, revision: entry.revision }, input.action, ctx.identity)]
  await ctx.services.history.append(snapshots, files)
}

/** The history snapshot of an entry's replaced state (publish and restore ones carry the Markdown body source). */
export function replacedSnapshot (
  entry: { collection: string, id: string }, replaced: { data: EntryData, revision: number }, action: SnapshotAction, editor: Identity
): { collection: string, id: string, snapshot: Omit<Snapshot, 'ts'> } {
  const { data, revision } = replaced
  const bodySource = (action === 'publish' || action === 'restore') && typeof data.body === 'string' ? { bodySource: data.body } : {}
  return {
    collection: entry.collection,
    id: entry.id,
    snapshot: { data, action, editor: { id: editor.id, name: editor.name }, revision, ...bodySource }
  }
}

/** The new data's issues (for `recordWrite`), and those the current data did not have: stored issues never block a write. */
export async function checkIssues (before: EntryData | undefined, services: Services, index: CollectionIndex, data: EntryData): Promise<{ issues: ValidationIssue[], added: ValidationIssue[] }> {
  const schema = index.collection.schema
  if (schema === null) return { issues: [], added: [] }
  const validate = await schemaValidator(services, schema, index.collection.name)
  const issues = validate(data)
  // Valid new data (the common case) needs no look at the old data's issues.
  if (issues.length === 0) return { issues, added: issues }
  const known = new Set((before === undefined ? [] : validate(before)).map(i => `${i.path}\u0000${i.code}`))
  return { issues, added: issues.filter(i => !known.has(`${i.path}\u0000${i.code}`)) }
}

/**
 * The validator of a schema, compiled off the event loop. A schema that does not compile is a 400
 * for create_collection's (no `collection`) and a 422 `collection_refused` for a stored
 * collection's (it arrived through git); one too costly to compile is a 422.
 */
export async function schemaValidator (services: Services, schema: JsonSchema, collection?: string): Promise<Validator> {
  try {
    return await services.content.schemas.validator(schema)
  } catch (err) {
    if (!(err instanceof SchemaCompileError)) throw err
    if (collection !== undefined) throw schemaRefusal(collection, err)
    if (err.tooCostly) throw new LimitExceededError(err.message, { field: 'schema' })
    throw new BadRequestError(`schema is not a valid JSON Schema: ${err.message}`, { field: 'schema' })
  }
}

/** The part of a JSON Schema a relation lives in. */
interface RelationSchema {
  properties?: Record<string, RelationSchema>
  items?: RelationSchema
  'x-cms-relation'?: { collection?: unknown }
}

/** One relation value found in data: where, which collection, which id. */
interface RelationValue { path: string, collection: string, id: string }

/** The relation values of data under a schema, collected into `out`. */
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

/** An issue per `x-cms-relation` value naming no entry (the editor's drafts count) that `before` did not hold. */
async function relationIssues (services: Services, identity: Identity, schema: unknown, before: EntryData | undefined, data: EntryData): Promise<ValidationIssue[]> {
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
