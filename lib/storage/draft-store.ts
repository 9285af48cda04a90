/**
 * Each editor's private drafts on `refs/cms/drafts/<editorId>`, one DraftRecord per entry. A record
 * this version cannot read is reported as a legacy draft, never guessed at.
 */
import { createHash } from 'node:crypto'
import type { EntryData } from '../content/formats.js'
import { assertCollectionName, assertEntryId } from './names.js'
import { percentEncode, RefTreeStore, type DocKey, type TreeUpdate } from './ref-tree-store.js'
import type { RecordSigner } from './record-signature.js'
import type { GitStore } from './git-store.js'

/** One editor's pending change of one entry. */
export interface DraftRecord {
  version: 1
  collection: string
  id: string
  kind: 'put' | 'delete'
  data?: EntryData
  baseRevision: number
  revision: number
  updatedAt: number
  markdown?: unknown
  fieldsEdited?: boolean
}

/** A record, or a marker of a stored record this version cannot read. */
export type DraftEntry = DraftRecord | { legacy: true, collection: string, id: string }

export const DRAFTS_REF_PREFIX = 'refs/cms/drafts/'
/** Longest ref component we write; longer editor ids are hashed (file names stop at 255 bytes). */
const MAX_COMPONENT = 160

function decode (text: string, key: DocKey): DraftEntry {
  try {
    const value: unknown = JSON.parse(text)
    if (isDraftRecord(value)) return { ...value, collection: key.collection, id: key.id }
  } catch {}
  return { legacy: true, collection: key.collection, id: key.id }
}

function isDraftRecord (value: unknown): value is DraftRecord {
  const r = value as Partial<DraftRecord> | null
  return typeof r === 'object' && r !== null && !Array.isArray(r) && r.version === 1 &&
    (r.kind === 'put' || r.kind === 'delete') &&
    Number.isInteger(r.baseRevision) && Number.isInteger(r.revision) && typeof r.updatedAt === 'number' &&
    (r.data === undefined || (typeof r.data === 'object' && r.data !== null && !Array.isArray(r.data)))
}

/**
 * The ref of an editor's drafts: any id, every byte outside `[A-Za-z0-9_@-]` (`%` too) percent-encoded.
 * @param editorId the editor's identity id
 * @returns the full ref name
 */
export function draftRef (editorId: string): string {
  if (typeof editorId !== 'string' || editorId.length === 0) throw new Error('An editor id is required')
  let component = percentEncode(editorId, /[A-Za-z0-9_@-]/)
  // `%%` never comes out of the encoding above, so a hashed name cannot equal an encoded one.
  if (component.length > MAX_COMPONENT) component = `%%${createHash('sha256').update(editorId).digest('hex')}`
  return `${DRAFTS_REF_PREFIX}${component}`
}

/** Every editor's drafts, each on its own ref. */
export class DraftStore {
  private readonly stores = new Map<string, RefTreeStore<DraftEntry>>()

  /**
   * @param opts `git`, `signer`, and `keepEmptyRefs`: keep an editor's ref once it holds no draft
   *   (with refs synced to a remote, a deleted ref would be fetched back from it)
   */
  constructor (private readonly opts: { git: GitStore, signer?: RecordSigner, keepEmptyRefs?: boolean }) {}

  /**
   * An editor's draft of one entry.
   * @param editorId the editor
   * @param collection collection name
   * @param id entry id
   * @returns the record, or null when there is none or it is a legacy record
   */
  async get (editorId: string, collection: string, id: string): Promise<DraftRecord | null> {
    const doc = await this.storeOf(editorId).read(assertCollectionName(collection), assertEntryId(id))
    return doc === null || 'legacy' in doc ? null : doc
  }

  /**
   * An editor's drafts, all or in a scope.
   * @param editorId the editor
   * @param scope optional collection and id
   * @returns records and legacy markers, sorted by collection then id
   */
  async list (editorId: string, scope: { collection?: string, id?: string } = {}): Promise<DraftEntry[]> {
    if (scope.collection !== undefined) assertCollectionName(scope.collection)
    if (scope.id !== undefined) assertEntryId(scope.id)
    return (await this.storeOf(editorId).list(scope)).map(d => d.doc)
  }

  /**
   * Stores records (replacing the editor's earlier drafts of those entries), in one commit.
   * @param editorId the editor
   * @param records the new records
   * @param opts `keepExisting`: a record does not replace a draft the entry has (drafts a publish
   *   gives back when its commit lost to another instance's push)
   * @returns resolves once they are on the editor's ref
   */
  async put (editorId: string, records: DraftRecord[], opts: { keepExisting?: boolean } = {}): Promise<void> {
    const keepExisting = opts.keepExisting === true
    const updates: Array<TreeUpdate<DraftEntry>> = records.map(record => {
      const key: DocKey = { collection: assertCollectionName(record.collection), id: assertEntryId(record.id) }
      return { type: 'update', ...key, update: (current) => keepExisting && current !== null ? current : { ...record, ...key } }
    })
    await this.storeOf(editorId).update(updates)
  }

  /**
   * Removes drafts, in one commit.
   * @param editorId the editor
   * @param keys the entries whose drafts go
   * @returns the removed ones as `collection/id` (keys without a draft are left out)
   */
  async remove (editorId: string, keys: Array<{ collection: string, id: string }>): Promise<string[]> {
    const unique = new Map<string, DocKey>()
    for (const k of keys) {
      const key: DocKey = { collection: assertCollectionName(k.collection), id: assertEntryId(k.id) }
      unique.set(`${key.collection}/${key.id}`, key)
    }
    // Set on every run of an update, so the run that landed decides.
    const existed = new Map<string, boolean>()
    const updates: Array<TreeUpdate<DraftEntry>> = [...unique].map(([name, key]) => ({
      type: 'update',
      ...key,
      update: (current) => {
        existed.set(name, current !== null)
        return null
      }
    }))
    await this.storeOf(editorId).update(updates)
    return [...unique.keys()].filter(name => existed.get(name) === true)
  }

  /**
   * Which entries an editor has drafts of (legacy records included), without reading the drafts.
   * @param editorId the editor
   * @returns collection and id of each, sorted by collection then id
   */
  async keys (editorId: string): Promise<DocKey[]> {
    return await this.storeOf(editorId).keys()
  }

  private storeOf (editorId: string): RefTreeStore<DraftEntry> {
    const ref = draftRef(editorId)
    let store = this.stores.get(ref)
    if (store === undefined) {
      store = new RefTreeStore({ git: this.opts.git, ref, decode, message: 'cms: drafts', signer: this.opts.signer, deleteWhenEmpty: this.opts.keepEmptyRefs !== true })
      this.stores.set(ref, store)
    }
    return store
  }
}
