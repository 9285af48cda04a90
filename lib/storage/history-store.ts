/**
 * Entry history on `refs/cms/history`: one document `{ "snapshots": [...] }` per entry, newest
 * last, at most 50, `ts` strictly increasing per entry. A save's new entry file replaces the old one
 * only once the snapshot of the old one is durably on the ref.
 */
import { readdir, readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import { crc32 } from 'node:zlib'
import type { EntryData } from '../content/formats.js'
import { assertCollectionName, assertEntryId, isCollectionName, isEntryId } from './names.js'
import { RefTreeStore, type TreeUpdate } from './ref-tree-store.js'
import type { RecordSigner } from './record-signature.js'
import { prepareFileAtomic } from './atomic-write.js'
import type { GitStore } from './git-store.js'

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

/** A file a save replaces once the snapshot of what it replaces is on the ref. */
export interface FileWrite {
  /** Absolute path of the file. */
  path: string
  data: string | Uint8Array
}

export const HISTORY_REF = 'refs/cms/history'
/** How many snapshots an entry keeps; older ones are dropped. */
export const MAX_SNAPSHOTS = 50
/** At most this much JSON in an entry's snapshots (the newest kept whatever its size): a save rewrites them all. */
export const MAX_HISTORY_CHARS = 4 * 1024 * 1024

/** The newest snapshots within MAX_SNAPSHOTS and MAX_HISTORY_CHARS (`bound`: one on their JSON, when known). */
function newest (snapshots: Snapshot[], bound = Infinity): Snapshot[] {
  if (bound <= MAX_HISTORY_CHARS) return snapshots.slice(-MAX_SNAPSHOTS)
  let from = snapshots.length
  for (let chars = 0; from > 0 && snapshots.length - from < MAX_SNAPSHOTS; from--) {
    chars += JSON.stringify(snapshots[from - 1]).length
    if (chars > MAX_HISTORY_CHARS && from < snapshots.length) break
  }
  return snapshots.slice(from)
}

interface HistoryDoc { snapshots: Snapshot[], /** The length of the text it was read from (never written). */ chars?: number }

/** The well-formed snapshots of a history document's text (none when it is not valid JSON or not shaped like ours). */
export function parseHistory (text: string): Snapshot[] {
  try {
    const snapshots = (JSON.parse(text) as { snapshots?: unknown } | null)?.snapshots
    return Array.isArray(snapshots) ? snapshots.filter(isSnapshot) : []
  } catch {
    return []
  }
}

function isSnapshot (value: unknown): value is Snapshot {
  const s = value as Partial<Snapshot> | null
  return typeof s === 'object' && s !== null && typeof s.ts === 'number' && typeof s.data === 'object' && s.data !== null &&
    typeof s.action === 'string' && typeof s.editor === 'object' && s.editor !== null
}

/** The history of every entry, on one git ref. */
export class HistoryStore {
  readonly #store: RefTreeStore<HistoryDoc>
  readonly #journalDir: string | undefined

  /** @param opts the git store, the signer, and where an earlier version kept its journal (`.git/cms/history-journal`) */
  constructor (opts: { git: GitStore, journalDir?: string, signer?: RecordSigner }) {
    this.#store = new RefTreeStore<HistoryDoc>({ git: opts.git, ref: HISTORY_REF, decode: text => ({ snapshots: parseHistory(text), chars: text.length }), message: 'cms: history', signer: opts.signer })
    this.#journalDir = opts.journalDir
  }

  /**
   * Folds the snapshots an earlier version's journal holds into the ref (a ts already there is skipped), then deletes it.
   * @returns resolves once done
   */
  async open (): Promise<void> {
    const dir = this.#journalDir
    if (dir === undefined) return
    const byEntry = new Map<string, { collection: string, id: string, snapshots: Snapshot[] }>()
    const names = (await readdir(dir).catch(() => [] as string[])).filter(n => SEGMENT.test(n)).sort()
    for (const name of names) {
      const bytes = await readFile(path.join(dir, name))
      for (let at = 0; at + HEADER <= bytes.length;) {
        const length = bytes.readUInt32LE(at + 4)
        if (bytes.readUInt32LE(at) !== MAGIC || at + HEADER + length > bytes.length) break
        const payload = bytes.subarray(at + HEADER, at + HEADER + length)
        if (bytes.readUInt32LE(at + 8) !== crc32(payload, crc32(bytes.subarray(at + 4, at + 8)))) break
        const r = parseJournalRecord(payload)
        if (r !== null) {
          const entry = byEntry.get(`${r.collection}/${r.id}`) ?? { collection: r.collection, id: r.id, snapshots: [] }
          entry.snapshots.push(r.snapshot)
          byEntry.set(`${r.collection}/${r.id}`, entry)
        }
        at += HEADER + length
      }
    }
    if (byEntry.size > 0) {
      await this.#store.update([...byEntry.values()].map(e => ({
        type: 'update',
        collection: e.collection,
        id: e.id,
        // A journal snapshot whose ts is already on the ref was folded before.
        update: current => ({ snapshots: unionSnapshots(current?.snapshots ?? [], e.snapshots.filter(s => current?.snapshots.some(r => r.ts === s.ts) !== true)) })
      })))
    }
    await rm(dir, { recursive: true, force: true })
  }

  /**
   * The snapshots of an entry.
   * @param collection collection name
   * @param id entry id
   * @returns the snapshots, newest last ([] when there are none)
   */
  async list (collection: string, id: string): Promise<Snapshot[]> {
    return (await this.#store.read(assertCollectionName(collection), assertEntryId(id)))?.snapshots ?? []
  }

  /**
   * Records snapshots in one commit. Each gets `ts = max(now, last ts of its entry + 1)`, so ts is
   * strictly increasing per entry even within one millisecond; each entry keeps the newest 50.
   * @param items the entries and their snapshots (without ts)
   * @param files files written (fsynced under a temporary name meanwhile) and put in place once the
   *   snapshots are on the ref: a save's new entry file, whose old state is the snapshot
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
        // Last, so that a stray `ts` from the caller never overrides the one assigned here.
        const snapshot: Snapshot = { ...item.snapshot, ts: Math.max(Date.now(), (snapshots.at(-1)?.ts ?? 0) + 1) }
        stored[i] = snapshot
        return { snapshots: newest([...snapshots, snapshot], (current?.chars ?? 0) + JSON.stringify(snapshot).length) }
      }
    }))
    const prepared = files.map(async f => await prepareFileAtomic(f.path, f.data))
    const [writes, landed] = await Promise.allSettled([Promise.all(prepared), this.#store.update(updates)])
    if (writes.status === 'rejected' || landed.status === 'rejected') {
      await Promise.all(prepared.map(async p => { await (await p.catch(() => null))?.abort() }))
      throw writes.status === 'rejected' ? writes.reason : (landed as PromiseRejectedResult).reason
    }
    await Promise.all(writes.value.map(async write => { await write.commit() }))
    return stored
  }

  /** Drops the history of a whole collection (delete_collection); resolves once the change is on the ref. */
  async removeCollection (collection: string): Promise<void> {
    await this.#store.update([{ type: 'removeCollection', collection: assertCollectionName(collection) }])
  }

  /** Waits until every append begun before the call is on the ref (each is when it resolves). */
  async flush (): Promise<void> {
    await this.#store.idle()
  }
}

/**
 * The old journal: segments `<16 digits>.journal` of frames `"CMSJ" | length (u32 LE) | crc32 of length
 * and payload (u32 LE) | payload {"c": collection, "i": id, "s": snapshot}`, ending at a torn frame.
 */
const MAGIC = 0x4a534d43
const HEADER = 12
const SEGMENT = /^\d{16}\.journal$/

/** One well-formed record of the old journal, or null. */
function parseJournalRecord (payload: Buffer): { collection: string, id: string, snapshot: Snapshot } | null {
  try {
    const { c, i, s } = JSON.parse(payload.toString('utf8')) as { c?: unknown, i?: unknown, s?: { ts?: unknown } }
    if (!isCollectionName(c) || typeof i !== 'string' || !isEntryId(i) || typeof s !== 'object' || s === null) return null
    if (!Number.isSafeInteger(s.ts) || (s.ts as number) <= 0) return null
    return { collection: c, id: i, snapshot: s as Snapshot }
  } catch {
    return null
  }
}

/**
 * Snapshots of one entry from two sources (two instances, the ref and the old journal): identical ones
 * once, in ts order, a repeated ts moved up by 1 ms (a restore names a snapshot by its ts), the newest kept.
 * @returns the merged snapshots of `a` and `b`
 */
export function unionSnapshots (a: readonly Snapshot[], b: readonly Snapshot[]): Snapshot[] {
  const all = [...new Map([...a, ...b].map(s => [JSON.stringify(s), s])).values()].sort((x, y) => x.ts - y.ts)
  for (let i = 1; i < all.length; i++) if (all[i]!.ts <= all[i - 1]!.ts) all[i] = { ...all[i]!, ts: all[i - 1]!.ts + 1 }
  return newest(all)
}
