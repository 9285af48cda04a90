/**
 * Entry history on `refs/cms/history`: one document `{ "snapshots": [...] }` per entry, newest
 * last, at most 50, `ts` strictly increasing per entry. It travels with `git push`/`git fetch`
 * and never touches the working tree.
 */
import type { EntryData } from '../content/formats.js'
import { assertCollectionName, assertEntryId } from './names.js'
import { RefTreeStore, type DocCodec, type TreeUpdate } from './ref-tree-store.js'
import type { PackStore } from './pack-store.js'
import type { FileWrite } from './group-commit.js'

export type SnapshotAction = 'save' | 'put' | 'delete' | 'reorder' | 'publish' | 'restore'

/** An entry as it was just before `action` (by `editor`) replaced or deleted it. */
export interface Snapshot {
  ts: number
  data: EntryData
  action: SnapshotAction
  editor: { id: string, name: string }
  revision?: number
  bodySource?: string
}

/** The ref holding the history. */
export const HISTORY_REF = 'refs/cms/history'
/** How many snapshots an entry keeps; older ones are dropped. */
export const MAX_SNAPSHOTS = 50

interface HistoryDoc { snapshots: Snapshot[] }

/** A document that is not valid JSON, or not shaped like ours, reads as an empty history. */
const codec: DocCodec<HistoryDoc> = {
  decode: (text) => {
    try {
      const value: unknown = JSON.parse(text)
      const snapshots = (value as { snapshots?: unknown } | null)?.snapshots
      if (!Array.isArray(snapshots)) return { snapshots: [] }
      return { snapshots: snapshots.filter(isSnapshot) }
    } catch {
      return { snapshots: [] }
    }
  },
  encode: (doc) => `${JSON.stringify(doc)}\n`
}

function isSnapshot (value: unknown): value is Snapshot {
  const s = value as Partial<Snapshot> | null
  return typeof s === 'object' && s !== null && typeof s.ts === 'number' && typeof s.data === 'object' && s.data !== null &&
    typeof s.action === 'string' && typeof s.editor === 'object' && s.editor !== null
}

/** The history of every entry, on one git ref. */
export class HistoryStore {
  private readonly store: RefTreeStore<HistoryDoc>

  /** @param opts `gitDir`: the `.git` directory; `packs`: its packs (shared with the draft store) */
  constructor (opts: { gitDir: string, packs?: PackStore }) {
    this.store = new RefTreeStore({ gitDir: opts.gitDir, ref: HISTORY_REF, codec, message: 'cms: history', packs: opts.packs })
  }

  /**
   * The snapshots of an entry.
   * @param collection collection name
   * @param id entry id
   * @returns the snapshots, newest last ([] when there are none)
   */
  async list (collection: string, id: string): Promise<Snapshot[]> {
    const doc = await this.store.read(assertCollectionName(collection), assertEntryId(id))
    return doc?.snapshots ?? []
  }

  /**
   * One snapshot of an entry.
   * @param collection collection name
   * @param id entry id
   * @param ts the snapshot's timestamp
   * @returns the snapshot, or null
   */
  async find (collection: string, id: string, ts: number): Promise<Snapshot | null> {
    return (await this.list(collection, id)).find(s => s.ts === ts) ?? null
  }

  /**
   * Records snapshots, all in one commit. Each gets `ts = max(now, last ts of its entry + 1)`, so
   * ts is strictly increasing per entry even within one millisecond; each entry keeps the newest 50.
   * @param items the entries and their snapshots (without ts)
   * @param files files replaced (atomically) only once the snapshots are durable on the ref, in the
   *   same group commit: a save's new entry file, whose old state is the snapshot
   * @returns the stored snapshots, in the order of `items`
   */
  async append (items: Array<{ collection: string, id: string, snapshot: Omit<Snapshot, 'ts'> }>, files: readonly FileWrite[] = []): Promise<Snapshot[]> {
    const stored = new Array<Snapshot>(items.length)
    const updates: Array<TreeUpdate<HistoryDoc>> = items.map((item, i) => ({
      type: 'update',
      collection: assertCollectionName(item.collection),
      id: assertEntryId(item.id),
      update: (current) => {
        const snapshots = current?.snapshots ?? []
        const last = snapshots.at(-1)?.ts ?? 0
        const snapshot: Snapshot = { ts: Math.max(Date.now(), last + 1), ...withoutTs(item.snapshot) }
        stored[i] = snapshot
        return { snapshots: [...snapshots, snapshot].slice(-MAX_SNAPSHOTS) }
      }
    }))
    await this.store.update(updates, files)
    return stored
  }

  /**
   * Drops the history of a whole collection (delete_collection).
   * @param collection collection name
   * @returns resolves once the change is on the ref
   */
  async removeCollection (collection: string): Promise<void> {
    await this.store.update([{ type: 'removeCollection', collection: assertCollectionName(collection) }])
  }
}

/** A caller passing a stray `ts` must not override the one we assign. */
function withoutTs (snapshot: Omit<Snapshot, 'ts'>): Omit<Snapshot, 'ts'> {
  const { ts: _ignored, ...rest } = snapshot as Snapshot
  return rest
}
