/**
 * Entry history on `refs/cms/history`: one document `{ "snapshots": [...] }` per entry, newest
 * last, at most 50, `ts` strictly increasing per entry. It travels with `git push`/`git fetch`
 * and never touches the working tree.
 *
 * With a journal (`journalDir`, what the service uses: issue 18, eighth pass), a save's snapshot is
 * made durable by appending it to the history journal (history-journal.ts) in the same fsync round
 * as the entry file's temporary file, and the file is renamed into place right after: no git commit
 * on the save's path. The journal's snapshots are folded into the ref in the background, in large
 * batches (FOLD_INTERVAL_MS while saves come, FOLD_IDLE_MS after the last one, and on `flush` /
 * `close`), through the same group commit as before; a folded segment is dropped only once the ref
 * holding its snapshots is durable. Every read sees the ref and the snapshots not folded yet as one
 * (an overlay per entry), and `ts` is assigned against both. At `open` the segments a crash left
 * are folded (idempotently: a snapshot whose ts is already in its entry's document is skipped)
 * before history is read. Whatever reads or moves the ref as a git ref (a push, delete_collection)
 * calls `flush` first. Without a journal every append is a commit on the ref (the tests of the
 * commit path use that).
 */
import type { EntryData } from '../content/formats.js'
import { assertCollectionName, assertEntryId, isCollectionName, isEntryId } from './names.js'
import { RefTreeStore, type DocCodec, type DocText, type TreeUpdate } from './ref-tree-store.js'
import { PackStore } from './pack-store.js'
import type { FileWrite } from './group-commit.js'
import { HistoryJournal } from './history-journal.js'
import { readRef } from './git-refs.js'

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
/** While saves come, the journal is folded into the ref this often (the ref lags by at most this plus a fold). */
export const FOLD_INTERVAL_MS = 200
/** After the last save, the journal is folded this soon. */
export const FOLD_IDLE_MS = 30

/**
 * A snapshot in the journal, not folded into the ref yet. It is kept as the record's bytes, not as
 * objects: it lives until the next fold (a few hundred ms), long enough for the garbage collector to
 * promote an object graph (the entry's whole data), and a buffer is one small object to promote.
 */
interface Unfolded {
  collection: string
  id: string
  ts: number
  /** The journal record: `{ c, i, s }` as JSON (see `parseRecord`). */
  payload: Buffer
  /** Where the snapshot's own JSON text (`s`, the record's last member) starts in `payload` (see `encodeRecord`). */
  sAt: number
  /** The journal segment it is in. */
  seq: number
  /** Its write and sync succeeded (a fold takes only those). */
  durable: boolean
}

/** Options of a HistoryStore. */
export interface HistoryStoreOptions {
  /** The `.git` directory. */
  gitDir: string
  /** Its packs (shared with the draft store). */
  packs?: PackStore
  /** The history journal's folder (`.git/cms/history-journal`); without it every append is a commit. */
  journalDir?: string
  /** Told what went wrong in the background (a fold that failed and will be retried, refused journal records). */
  warn?: (message: string, details: Record<string, unknown>) => void
  /** The fold's interval while saves come (default FOLD_INTERVAL_MS). */
  foldIntervalMs?: number
  /** How soon after the last save the journal is folded (default FOLD_IDLE_MS). */
  foldIdleMs?: number
}

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

/** The history of every entry, on one git ref (and its journal). */
export class HistoryStore {
  private readonly store: RefTreeStore<HistoryDoc>
  readonly #packs: PackStore
  readonly #journal: HistoryJournal | null
  readonly #warn: (message: string, details: Record<string, unknown>) => void
  /** Snapshots in the journal not folded yet, per entry (`collection\0id`), oldest first. */
  readonly #unfolded = new Map<string, Unfolded[]>()
  #unfoldedCount = 0
  /** Bumped when a fold removed snapshots from the overlay (a read that spans it reads again). */
  #foldGeneration = 0
  /** Resolves once the journal a previous process left is folded (`open`). */
  #opened: Promise<void> | null = null
  /** `#opened` resolved. */
  #openDone = false
  /** The fold running or queued; folds run one after the other. */
  #folding: Promise<void> = Promise.resolve()
  #intervalTimer: NodeJS.Timeout | null = null
  #idleTimer: NodeJS.Timeout | null = null
  /** When `#scheduleFold` was last called (ms since the epoch): the idle fold comes FOLD_IDLE_MS after it. */
  #lastScheduled = 0
  #closed = false
  readonly #gitDir: string
  /** Per entry, the last ts of its document on the ref at `#knownHead` (so an append decodes no document). */
  readonly #lastOnRef = new Map<string, number>()
  /** The ref's value `#lastOnRef` describes (undefined: none yet). */
  #knownHead: string | null | undefined = undefined
  /** A fold's commit is being written: the ref may hold it before the fold learns its id. */
  #foldWriting = false
  readonly #foldIntervalMs: number
  readonly #foldIdleMs: number

  /** @param opts `gitDir`: the `.git` directory; `packs`: its packs (shared with the draft store); `journalDir`: see HistoryStoreOptions */
  constructor (opts: HistoryStoreOptions) {
    this.#gitDir = opts.gitDir
    this.#packs = opts.packs ?? new PackStore(opts.gitDir)
    this.store = new RefTreeStore({ gitDir: opts.gitDir, ref: HISTORY_REF, codec, message: 'cms: history', packs: this.#packs })
    this.#journal = opts.journalDir === undefined ? null : new HistoryJournal(opts.journalDir)
    this.#warn = opts.warn ?? (() => {})
    this.#foldIntervalMs = opts.foldIntervalMs ?? FOLD_INTERVAL_MS
    this.#foldIdleMs = opts.foldIdleMs ?? FOLD_IDLE_MS
  }

  /**
   * Opens the journal: reads the segments a previous process left (a crash), refuses records that
   * are not well-formed snapshots of valid names, folds the others into the ref and drops the
   * segments. History is read and appended only after this. Without a journal, nothing to do.
   * @returns resolves once the journal is folded
   */
  async open (): Promise<void> {
    this.#opened ??= this.#recover()
    await this.#opened
    this.#openDone = true
  }

  async #recover (): Promise<void> {
    const journal = this.#journal
    if (journal === null) return
    const segments = await journal.open()
    let refused = 0
    for (const segment of segments) {
      if (segment.stopped !== null) this.#warn('a history journal segment ends with bytes that are not an intact record; they are ignored', { segment: segment.name, reason: segment.stopped, ignoredBytes: segment.ignoredBytes })
      for (const payload of segment.payloads) {
        const record = parseRecord(payload)
        if (record === null) { refused++; continue }
        // Written again in the form `append` writes, so the fold can take the snapshot's text as it is.
        const encoded = encodeRecord(record.collection, record.id, record.snapshot)
        this.#addUnfolded({ collection: record.collection, id: record.id, ts: record.snapshot.ts, ...encoded, seq: segment.seq, durable: true })
      }
    }
    if (refused > 0) this.#warn('history journal records that are not snapshots of valid entries were refused', { refused })
    // Records of one entry in ts order (a hostile or repeated record may not be).
    for (const list of this.#unfolded.values()) list.sort((a, b) => a.ts - b.ts)
    if (!journal.hasSealed) return
    try {
      await this.#foldQueued()
    } catch (err) {
      // Reads and appends see the journal's snapshots anyway (the overlay); the fold is retried.
      this.#warn('folding the history journal left by the previous process failed; its snapshots stay durable in the journal and the fold is retried', { err })
      this.#scheduleFold()
    }
  }

  /**
   * The snapshots of an entry.
   * @param collection collection name
   * @param id entry id
   * @returns the snapshots, newest last ([] when there are none)
   */
  async list (collection: string, id: string): Promise<Snapshot[]> {
    const c = assertCollectionName(collection)
    const i = assertEntryId(id)
    if (this.#journal === null) return (await this.store.read(c, i))?.snapshots ?? []
    await this.open()
    for (;;) {
      const generation = this.#foldGeneration
      const onRef = (await this.store.read(c, i))?.snapshots ?? []
      // A fold that landed while the ref was read took its snapshots out of the overlay: read again.
      if (generation !== this.#foldGeneration) continue
      const unfolded = this.#unfolded.get(keyOf(c, i))
      return unfolded === undefined ? onRef : mergeSnapshots(onRef, unfolded.map(snapshotOf))
    }
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
   * Records snapshots. Each gets `ts = max(now, last ts of its entry + 1)`, so ts is strictly
   * increasing per entry even within one millisecond; each entry keeps the newest 50. With the
   * journal the snapshots are durable in it when this resolves (and on the ref within a fold
   * interval); without, they are one commit on the ref.
   * @param items the entries and their snapshots (without ts)
   * @param files files replaced (atomically) only once the snapshots are durable: a save's new
   *   entry file, whose old state is the snapshot
   * @returns the stored snapshots, in the order of `items`
   */
  async append (items: Array<{ collection: string, id: string, snapshot: Omit<Snapshot, 'ts'> }>, files: readonly FileWrite[] = []): Promise<Snapshot[]> {
    if (this.#journal === null) return await this.#appendToRef(items, files)
    const keys = items.map(item => ({ collection: assertCollectionName(item.collection), id: assertEntryId(item.id) }))
    // Opened once; a save after that awaits no promise for it.
    if (!this.#openDone) await this.open()
    if (this.#closed) throw new Error('The history store is closed')
    if (keys.length === 0) {
      await this.#packs.group.placeAfter(files, Promise.resolve())
      return []
    }
    let lastOnRef: number[]
    for (;;) {
      const generation = this.#foldGeneration
      const head = await readRef(this.#gitDir, HISTORY_REF)
      // While a fold's commit is written the ref may already hold it: the fold itself then tells
      // what changed (its entries only), and this append reads the documents at that value without
      // remembering them. Otherwise a ref moved by someone else (or unknown yet) makes what was
      // known of the documents forgotten.
      const remembered = head === this.#knownHead || !this.#foldWriting
      if (head !== this.#knownHead && remembered) {
        this.#lastOnRef.clear()
        this.#knownHead = head
      }
      // One entry (a save) without a list of promises.
      lastOnRef = keys.length === 1
        ? [await this.#lastTsOnRef(keys[0]!.collection, keys[0]!.id, head, remembered)]
        : await Promise.all(keys.map(async k => await this.#lastTsOnRef(k.collection, k.id, head, remembered)))
      // A fold that landed meanwhile took snapshots out of the overlay: read again.
      if (generation === this.#foldGeneration && (head === this.#knownHead || !remembered)) break
    }
    // From here on synchronous: the ts of two appends of one entry never interleave.
    const now = Date.now()
    const records: Unfolded[] = []
    const lastOf = new Map<string, number>()
    const stored = keys.map((k, i) => {
      const key = keyOf(k.collection, k.id)
      const last = Math.max(lastOnRef[i]!, lastOf.get(key) ?? 0, this.#unfolded.get(key)?.at(-1)?.ts ?? 0)
      const snapshot: Snapshot = { ts: Math.max(now, last + 1), ...withoutTs(items[i]!.snapshot) }
      lastOf.set(key, snapshot.ts)
      records.push({ collection: k.collection, id: k.id, ts: snapshot.ts, ...encodeRecord(k.collection, k.id, snapshot), seq: 0, durable: false })
      return snapshot
    })
    const { seq, durable } = this.#journal.append(records.map(r => r.payload))
    for (const record of records) {
      record.seq = seq
      this.#addUnfolded(record)
    }
    // A record whose write or sync failed was never durable: its save fails, and it is not folded.
    const written = durable.then(() => {
      for (const record of records) record.durable = true
    }, (err: unknown) => {
      for (const record of records) this.#removeUnfolded(record)
      throw err
    })
    this.#scheduleFold()
    await this.#packs.group.placeAfter(files, written)
    return stored
  }

  /**
   * Drops the history of a whole collection (delete_collection).
   * @param collection collection name
   * @returns resolves once the change is on the ref
   */
  async removeCollection (collection: string): Promise<void> {
    const c = assertCollectionName(collection)
    // The journal's snapshots of the collection go to the ref first, so none comes back after.
    await this.flush()
    await this.store.update([{ type: 'removeCollection', collection: c }])
  }

  /**
   * Folds every snapshot appended before this call into the ref, durably (before the ref is read
   * or moved as a git ref: a push of refs/cms/*, delete_collection).
   * @returns resolves once the ref holds them
   */
  async flush (): Promise<void> {
    if (this.#journal === null) return
    await this.open()
    await this.#foldQueued()
  }

  /**
   * Folds what is left and closes the journal: a clean stop leaves it empty.
   * @returns resolves when closed
   */
  async close (): Promise<void> {
    if (this.#journal === null || this.#closed) return
    await this.open().catch(() => {})
    this.#closed = true
    this.#clearTimers()
    try {
      await this.#foldQueued()
    } finally {
      await this.#journal.close()
    }
  }

  /** Bounded: a process that saved more entries than this starts over (each is read again once). */
  #remember (key: string, last: number): void {
    if (this.#lastOnRef.size >= LAST_TS_ENTRIES && !this.#lastOnRef.has(key)) this.#lastOnRef.clear()
    this.#lastOnRef.set(key, last)
  }

  /**
   * The last ts of an entry's document on the ref at `head` (0: none), remembered per entry (when
   * `remembered`: `head` is the value the remembered ones describe). A document this process wrote
   * gives it without being decoded (its layout).
   */
  async #lastTsOnRef (collection: string, id: string, head: string | null, remembered: boolean): Promise<number> {
    const key = keyOf(collection, id)
    const known = remembered ? this.#lastOnRef.get(key) : undefined
    if (known !== undefined) return known
    const doc = await this.store.readTextAt(head, collection, id)
    const layout = doc?.layout as DocLayout | undefined
    const last = doc === null ? 0 : layout !== undefined ? layout.last : codec.decode(doc.text, { collection, id }).snapshots.at(-1)?.ts ?? 0
    if (remembered && this.#knownHead === head) this.#remember(key, last)
    return last
  }

  /** The commit per append of a store without a journal. */
  async #appendToRef (items: Array<{ collection: string, id: string, snapshot: Omit<Snapshot, 'ts'> }>, files: readonly FileWrite[]): Promise<Snapshot[]> {
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

  #addUnfolded (record: Unfolded): void {
    const key = keyOf(record.collection, record.id)
    const list = this.#unfolded.get(key)
    if (list === undefined) this.#unfolded.set(key, [record])
    else list.push(record)
    this.#unfoldedCount++
  }

  #removeUnfolded (record: Unfolded): void {
    const key = keyOf(record.collection, record.id)
    const list = this.#unfolded.get(key)
    const at = list?.indexOf(record) ?? -1
    if (at < 0) return
    list!.splice(at, 1)
    if (list!.length === 0) this.#unfolded.delete(key)
    this.#unfoldedCount--
  }

  /**
   * Arms the fold's timers: the interval one once, and the idle one, which fires FOLD_IDLE_MS after
   * the last call. A call while the idle timer runs only notes its time (the timer, once due, waits
   * for the rest of the idle time when calls came meanwhile): no timer re-armed and no closure made
   * per save.
   */
  #scheduleFold (): void {
    if (this.#closed) return
    this.#lastScheduled = Date.now()
    if (this.#intervalTimer === null) {
      this.#intervalTimer = setTimeout(this.#timedFold, this.#foldIntervalMs)
      this.#intervalTimer.unref()
    }
    if (this.#idleTimer === null) {
      this.#idleTimer = setTimeout(this.#idleDue, this.#foldIdleMs)
      this.#idleTimer.unref()
    }
  }

  /** The idle timer: folds once FOLD_IDLE_MS passed since the last `#scheduleFold`, else waits for the rest. */
  readonly #idleDue = (): void => {
    const rest = this.#lastScheduled + this.#foldIdleMs - Date.now()
    if (rest > 0) {
      this.#idleTimer = setTimeout(this.#idleDue, rest)
      this.#idleTimer.unref()
      return
    }
    this.#timedFold()
  }

  /** A timer's fold; a failed one is logged and scheduled again (its snapshots stay in the journal). */
  readonly #timedFold = (): void => {
    this.#clearTimers()
    void this.#foldQueued().catch((err: unknown) => {
      this.#warn('folding the history journal into the ref failed; the snapshots stay durable in the journal and the fold is retried', { err })
      this.#scheduleFold()
    })
  }

  #clearTimers (): void {
    if (this.#intervalTimer !== null) clearTimeout(this.#intervalTimer)
    if (this.#idleTimer !== null) clearTimeout(this.#idleTimer)
    this.#intervalTimer = null
    this.#idleTimer = null
  }

  /** Runs a fold after the one running (if any): it covers everything appended before this call. */
  async #foldQueued (): Promise<void> {
    const run = this.#folding.catch(() => {}).then(async () => { await this.#foldOnce() })
    this.#folding = run
    await run
  }

  /**
   * Seals the journal's active segment, folds the snapshots of every sealed segment into one
   * commit on the ref (through the group commit: pack, fsyncs, compare-and-swap), and once that is
   * durable takes them out of the overlay and drops the segments.
   */
  async #foldOnce (): Promise<void> {
    const journal = this.#journal!
    if (this.#unfoldedCount === 0 && !journal.hasSealed) return
    const upTo = await journal.rotate()
    const folding: Unfolded[] = []
    const updates: Array<TreeUpdate<HistoryDoc>> = []
    /** Each folded entry's last ts in the document that landed (the last run of its update). */
    const lastOf = new Map<string, number>()
    for (const [key, list] of this.#unfolded) {
      const entry = list.filter(u => u.seq <= upTo && u.durable)
      if (entry.length === 0) continue
      folding.push(...entry)
      updates.push({
        type: 'update',
        collection: entry[0]!.collection,
        id: entry[0]!.id,
        // The document's text is edited directly: the snapshots' texts are the records' own, and
        // a document this process wrote is appended to without being decoded (issue 18, ninth pass).
        edit: before => {
          const folded = foldText(before, entry)
          lastOf.set(key, folded.layout.last)
          return folded
        },
        update: current => {
          const merged = mergeSnapshots(current?.snapshots ?? [], entry.map(snapshotOf))
          lastOf.set(key, merged.at(-1)?.ts ?? 0)
          return { snapshots: merged }
        }
      })
    }
    let landed: Awaited<ReturnType<RefTreeStore<HistoryDoc>['updateWithCommit']>> = null
    if (updates.length > 0) {
      this.#foldWriting = true
      try {
        landed = await this.store.updateWithCommit(updates)
      } finally {
        this.#foldWriting = false
      }
    }
    // The ref holds them now (a read that began before this sees them in the overlay, or reads again).
    this.#foldGeneration++
    for (const record of folding) this.#removeUnfolded(record)
    if (landed !== null && landed.parent === this.#knownHead) {
      // Built on the value the cache describes: only the folded entries changed.
      this.#knownHead = landed.commit
      for (const [key, last] of lastOf) this.#remember(key, last)
    } else if (updates.length > 0) {
      this.#knownHead = undefined
    }
    await journal.drop(upTo)
  }
}

/** How many entries' last ts the store remembers at most (~100 bytes each). */
const LAST_TS_ENTRIES = 100_000

function keyOf (collection: string, id: string): string {
  return `${collection}\u0000${id}`
}

/**
 * Snapshots laid over a document's: those whose ts is already there are skipped, the others go in
 * ts order, and the newest MAX_SNAPSHOTS are kept.
 */
function mergeSnapshots (onRef: readonly Snapshot[], extra: readonly Snapshot[]): Snapshot[] {
  const last = onRef.at(-1)?.ts ?? 0
  // The common case: every extra one is newer than the document's last.
  if (extra.every((s, i) => s.ts > (i === 0 ? last : extra[i - 1]!.ts))) return [...onRef, ...extra].slice(-MAX_SNAPSHOTS)
  const byTs = new Map<number, Snapshot>()
  for (const s of onRef) byTs.set(s.ts, s)
  for (const s of extra) if (!byTs.has(s.ts)) byTs.set(s.ts, s)
  return [...byTs.values()].sort((a, b) => a.ts - b.ts).slice(-MAX_SNAPSHOTS)
}

/** The snapshot of a record this process wrote or `parseRecord` accepted. */
function snapshotOf (record: Unfolded): Snapshot {
  return JSON.parse(snapshotTextOf(record)) as Snapshot
}

/** The snapshot's JSON text in its record (what `JSON.stringify` gives for it: see `encodeRecord`). */
function snapshotTextOf (record: Unfolded): string {
  return record.payload.toString('utf8', record.sAt, record.payload.length - 1)
}

/**
 * A journal record: `{"c":…,"i":…,"s":…}`, the text `JSON.stringify({ c, i, s })` gives, with
 * where the snapshot's own text starts.
 */
function encodeRecord (collection: string, id: string, snapshot: Snapshot): { payload: Buffer, sAt: number } {
  const head = `{"c":${JSON.stringify(collection)},"i":${JSON.stringify(id)},"s":`
  return { payload: Buffer.from(`${head}${JSON.stringify(snapshot)}}`, 'utf8'), sAt: Buffer.byteLength(head, 'utf8') }
}

/** A history document's text as `codec.encode` writes it: this head, the snapshots' JSON texts joined by commas, this tail. */
const DOC_HEAD = '{"snapshots":['
const DOC_TAIL = ']}\n'

/** Where each snapshot of a document text the fold made starts, and the last one's ts (see `foldText`). */
interface DocLayout {
  starts: number[]
  last: number
}

/**
 * The text (and its layout) of an entry's history document after a fold of its journal records:
 * exactly `codec.encode({ snapshots: mergeSnapshots(decoded document, the records' snapshots) })`.
 * A document this fold's store wrote (its layout known) whose last ts is older than the records'
 * (the common case) is appended to: its oldest snapshots beyond MAX_SNAPSHOTS cut at their known
 * starts, the records' texts added as they are, nothing decoded or encoded. Anything else is
 * decoded and merged, and its snapshots encoded one by one (which gives the layout).
 */
function foldText (before: DocText | null, records: readonly Unfolded[]): { text: string, layout: DocLayout } {
  const layout = before?.layout as DocLayout | undefined
  const appendable = before === null || (layout !== undefined && before.text.startsWith(DOC_HEAD) && before.text.endsWith(DOC_TAIL))
  const priorLast = layout?.last ?? 0
  if (appendable && records.every((r, i) => r.ts > (i === 0 ? priorLast : records[i - 1]!.ts))) {
    const texts = records.map(snapshotTextOf)
    const priorCount = layout?.starts.length ?? 0
    const drop = Math.max(0, priorCount + texts.length - MAX_SNAPSHOTS)
    if (drop >= priorCount) return docOf(texts.slice(drop - priorCount), records.at(-1)!.ts)
    const from = layout!.starts[drop]!
    const prior = before!.text.slice(from, before!.text.length - DOC_TAIL.length)
    const shift = DOC_HEAD.length - from
    const starts = layout!.starts.slice(drop).map(at => at + shift)
    let at = DOC_HEAD.length + prior.length + 1
    for (const text of texts) {
      starts.push(at)
      at += text.length + 1
    }
    return { text: `${DOC_HEAD}${prior},${texts.join(',')}${DOC_TAIL}`, layout: { starts, last: records.at(-1)!.ts } }
  }
  const merged = mergeSnapshots(before === null ? [] : codec.decode(before.text, { collection: '', id: '' }).snapshots, records.map(snapshotOf))
  return docOf(merged.map(s => JSON.stringify(s)), merged.at(-1)?.ts ?? 0)
}

/** A document of these snapshot texts, as `codec.encode` writes it, with its layout. */
function docOf (texts: readonly string[], last: number): { text: string, layout: DocLayout } {
  const starts = new Array<number>(texts.length)
  let at = DOC_HEAD.length
  for (let i = 0; i < texts.length; i++) {
    starts[i] = at
    at += texts[i]!.length + 1
  }
  return { text: `${DOC_HEAD}${texts.join(',')}${DOC_TAIL}`, layout: { starts, last } }
}

/** A journal record as written by `append`, or null when it is anything else. */
function parseRecord (payload: Buffer): { collection: string, id: string, snapshot: Snapshot } | null {
  let value: unknown
  try {
    value = JSON.parse(payload.toString('utf8'))
  } catch {
    return null
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null
  const { c, i, s } = value as { c?: unknown, i?: unknown, s?: unknown }
  if (!isCollectionName(c) || typeof i !== 'string' || !isEntryId(i)) return null
  if (!isSnapshot(s) || !Number.isSafeInteger(s.ts) || s.ts <= 0) return null
  return { collection: c, id: i, snapshot: s }
}

/** A caller passing a stray `ts` must not override the one we assign. */
function withoutTs (snapshot: Omit<Snapshot, 'ts'>): Omit<Snapshot, 'ts'> {
  const { ts: _ignored, ...rest } = snapshot as Snapshot
  return rest
}
