/**
 * The one write path of base content: under the entry's lock, re-read it, check the expected
 * revision, compute the new data, refuse new validation issues, record the replaced state in
 * history, replace the file atomically, and bump the revision.
 */
import { readFile, rm } from 'node:fs/promises'
import { RevisionConflictError, SchemaValidationError, UnreadableEntryError, type ValidationIssue } from '../errors.js'
import { serializeEntry, type EntryData } from '../content/formats.js'
import { assertRealInside } from '../storage/safe-path.js'
import { writeFileAtomic } from '../storage/atomic-write.js'
import type { IndexedEntry } from '../storage/collection-index.js'
import type { Snapshot } from '../storage/history-store.js'
import type { Identity } from '../config.js'
import type { Services } from '../services.js'

export type SnapshotAction = Snapshot['action']

/** The state of an entry that a change is computed from. */
export interface CurrentEntry {
  /** null when the entry does not exist (never did, or was deleted). */
  entry: IndexedEntry | null
  /** Its revision, or the last one it had before it was deleted (0 when it never existed). */
  revision: number
}

export interface ChangeEntryInput {
  collection: string
  id: string
  identity: Identity
  expectedRevision?: number | null
  /** The history action recorded for the replaced state. */
  action: SnapshotAction
  /** May the change replace an unreadable file? (put_entry with a matching expectedRevision) */
  replacesUnreadable?: boolean
  /** Extra snapshot members (e.g. `bodySource`). */
  snapshotExtra?: Partial<Snapshot>
  /**
   * Computes the new data from the current state; null deletes the entry. Throws to refuse.
   * @param current the entry as it is now, under the lock
   * @returns the new data, or null to delete
   */
  apply: (current: CurrentEntry) => EntryData | null | Promise<EntryData | null>
}

export interface ChangeEntryResult {
  revision: number
  /** false when the new data equals the stored data (nothing was written). */
  changed: boolean
}

/**
 * Applies one change to one entry of base storage.
 * @param services the instance
 * @param input what to change and how
 * @returns the entry's revision afterwards
 */
export async function changeEntry (services: Services, input: ChangeEntryInput): Promise<ChangeEntryResult> {
  const index = await services.content.index(input.collection)
  return await services.locks.run(`entry:${input.collection}/${input.id}`, async () => {
    const entry = await index.get(input.id)
    const revision = entry?.revision ?? index.lastRevision(input.id)
    const expected = input.expectedRevision ?? undefined
    if (expected !== undefined && expected !== revision) throw new RevisionConflictError(revision)
    if (entry?.readError !== undefined && !(input.replacesUnreadable === true && expected !== undefined)) {
      throw new UnreadableEntryError('Stored entry cannot be read; replace it with put_entry and its expectedRevision', {
        collection: input.collection, id: input.id, readError: entry.readError, currentRevision: revision
      })
    }
    const next = await input.apply({ entry, revision })
    const file = index.fileOf(input.id)
    await assertRealInside(services.content.repoRealDir, file)

    if (next === null) {
      if (entry === null) return { revision, changed: false }
      await recordReplaced(services, input, entry)
      await rm(file, { force: true })
      return { revision: await index.recordDelete(input.id), changed: true }
    }

    const added = addedIssues(entry?.validationIssues ?? [], services.content.schemas, index.collection.schema, next)
    if (added.length > 0) throw new SchemaValidationError(added)
    let previousText: string | undefined
    if (entry !== null && entry.readError === undefined) {
      try { previousText = await readFile(file, 'utf8') } catch {}
    }
    const text = serializeEntry(index.collection.format, next, previousText)
    if (text === previousText) return { revision, changed: false }
    if (entry !== null) await recordReplaced(services, input, entry)
    await writeFileAtomic(file, text)
    return { revision: await index.recordWrite(input.id, next), changed: true }
  })
}

async function recordReplaced (services: Services, input: ChangeEntryInput, entry: IndexedEntry): Promise<void> {
  if (entry.data === undefined) return
  // Markdown publish and restore snapshots carry the body source, so prose and frontmatter
  // restore together.
  const bodySource = (input.action === 'publish' || input.action === 'restore') && typeof entry.data.body === 'string'
    ? { bodySource: entry.data.body }
    : {}
  await services.history.append([{
    collection: input.collection,
    id: input.id,
    snapshot: {
      data: entry.data,
      action: input.action,
      editor: { id: input.identity.id, name: input.identity.name },
      revision: entry.revision,
      ...bodySource,
      ...input.snapshotExtra
    }
  }])
}

function addedIssues (
  before: ValidationIssue[],
  schemas: Services['content']['schemas'],
  schema: Record<string, unknown> | null,
  data: EntryData
): ValidationIssue[] {
  if (schema === null) return []
  const known = new Set(before.map(i => `${i.path}\u0000${i.code}`))
  return schemas.validator(schema)(data).filter(i => !known.has(`${i.path}\u0000${i.code}`))
}
