/**
 * The history journal's files: numbered segments `<16 digits>.journal` in one folder
 * (`.git/cms/history-journal/`), each a run of framed records (journal-frame.ts). Appends go to
 * the active segment: framed at once, and written (one synchronous write of every record appended
 * since the last round, into the page cache) when the fdatasync round that makes them durable
 * starts, shared with every append made meanwhile (CoalescedSync): one write and one fdatasync per
 * round, not a write per append (issue 18, eleventh pass). A new segment's name is made durable
 * (folder fsync) in the same round as its first records' data.
 *
 * The segments are folded into `refs/cms/history` elsewhere (history-store.ts): a fold seals the
 * active segment (`rotate`: later appends go to a new one), folds the records of the sealed
 * segments, and once the ref holding them is durable drops those segments (`drop`). After a crash
 * every segment still there is read at the next start (`open`) and folded again; folding is
 * idempotent, so a segment folded but not yet dropped does no harm.
 */
import fs from 'node:fs'
import { mkdir, readdir, readFile, unlink } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { CoalescedSync } from './coalesced-sync.js'
import { decodeFrames, encodeFrame, type DecodedFrames } from './journal-frame.js'

const fdatasync = promisify(fs.fdatasync)

const SEGMENT_NAME = /^(\d{16})\.journal$/

/** One segment as read at the start. */
export interface ReadSegment {
  seq: number
  /** Its file name, for messages. */
  name: string
  payloads: Buffer[]
  /** Where, and why, reading stopped before the end (null: every byte was an intact frame). */
  stopped: DecodedFrames['stopped']
  /** Bytes left unread after the last intact frame. */
  ignoredBytes: number
}

interface Segment {
  seq: number
  fd: number
  /** Bytes appended (intact frames only; a failed write marks the segment broken instead). */
  size: number
  /** Its name made durable (folder fsync after the create). */
  created: Promise<void>
  data: CoalescedSync
  /** Frames appended since the last round started, written when the next one starts (see `#flush`). */
  pending: Buffer[]
  /** The durability of the pending frames (shared by their appends: one round makes them all durable). */
  pendingDurable: Promise<void> | null
  /** Appends whose durability is not settled yet (a seal waits for them). */
  inFlight: Set<Promise<unknown>>
  /** A write or sync failed: nothing more is appended here (a torn frame may end it). */
  broken: boolean
}

/** A journal of records appended in order and dropped segment by segment. */
export class HistoryJournal {
  #active: Segment | null = null
  /** Sealed segments not dropped yet (their seq). */
  #sealed: number[] = []
  #closed = false
  readonly #folderSync: CoalescedSync

  /** @param dir the journal's folder (created when missing) */
  constructor (readonly dir: string) {
    this.#folderSync = CoalescedSync.folder(dir)
  }

  /**
   * Reads every segment left in the folder (a crash, or a stop that could not fold) and opens a new
   * active segment after them. Files of other names are left alone.
   * @returns the segments read, oldest first
   */
  async open (): Promise<ReadSegment[]> {
    await mkdir(this.dir, { recursive: true })
    const found: Array<{ seq: number, name: string }> = []
    for (const name of await readdir(this.dir)) {
      const match = SEGMENT_NAME.exec(name)
      if (match !== null) found.push({ seq: Number(match[1]), name })
    }
    found.sort((a, b) => a.seq - b.seq)
    const segments: ReadSegment[] = []
    for (const { seq, name } of found) {
      const bytes = await readFile(path.join(this.dir, name))
      const decoded = decodeFrames(bytes)
      segments.push({ seq, name, payloads: decoded.payloads, stopped: decoded.stopped, ignoredBytes: bytes.byteLength - decoded.end })
    }
    this.#sealed = found.map(f => f.seq)
    this.#active = this.#create((found.at(-1)?.seq ?? 0) + 1)
    return segments
  }

  /** Whether sealed segments wait to be dropped (after a crash, or a fold that failed). */
  get hasSealed (): boolean {
    return this.#sealed.length > 0
  }

  /**
   * Appends records to the active segment.
   * @param payloads the records' bytes, in order
   * @returns the segment they went to, and a promise that resolves once they are durable (rejects
   *   when the write or the sync failed: then they must be treated as never written)
   */
  append (payloads: readonly Uint8Array[]): { seq: number, durable: Promise<void> } {
    if (this.#closed) throw new Error('The history journal is closed')
    let segment = this.#active
    if (segment === null) throw new Error('The history journal is not open')
    // A segment a failed write may have torn is sealed; its intact records are still folded.
    if (segment.broken) segment = this.#rotateNow()
    // Framed first (a record over the limit throws here, before anything is queued).
    const frames = payloads.map(encodeFrame)
    for (const frame of frames) {
      segment.pending.push(frame)
      segment.size += frame.byteLength
    }
    // Written when the round that makes them durable starts (`#flush`): the appends of one round
    // share one write, one fdatasync and this promise.
    if (segment.pendingDurable === null) {
      const durable = Promise.all([segment.created, segment.data.sync()]).then(() => {}, (err: unknown) => {
        segment.broken = true
        throw err
      })
      segment.pendingDurable = durable
      const tracked = durable.catch(() => {})
      segment.inFlight.add(tracked)
      void tracked.then(() => segment.inFlight.delete(tracked))
    }
    return { seq: segment.seq, durable: segment.pendingDurable }
  }

  /**
   * Writes the frames appended since the last round, at the start of the fdatasync round that makes
   * them durable (synchronously, before the fdatasync: `CoalescedSync` runs its target at the round's
   * start, and appends made from then on wait for the next round). A segment a failed write or sync
   * may have torn gets nothing more: the round fails, and with it those appends.
   */
  #flush (segment: Segment): void {
    const frames = segment.pending
    segment.pending = []
    segment.pendingDurable = null
    if (frames.length === 0) return
    if (segment.broken) throw new Error('The history journal segment failed a write or sync before')
    const bytes = frames.length === 1 ? frames[0]! : Buffer.concat(frames)
    try {
      for (let at = 0; at < bytes.byteLength;) at += fs.writeSync(segment.fd, bytes, at, bytes.byteLength - at)
    } catch (err) {
      segment.broken = true
      throw err
    }
  }

  /**
   * Seals the active segment when it holds anything (later appends go to a new one) and waits until
   * its appends settled.
   * @returns the newest sealed segment's seq: every record appended before the call is in a segment
   *   up to it
   */
  async rotate (): Promise<number> {
    const active = this.#active
    if (active === null) throw new Error('The history journal is not open')
    if (active.size === 0 && !active.broken) return active.seq - 1
    this.#rotateNow()
    await Promise.all([...active.inFlight])
    return active.seq
  }

  /**
   * Removes the sealed segments up to `seq` (their records are durable on the ref now). The removal
   * need not be durable: a segment that comes back after a crash is folded again, to no effect.
   * @param seq the newest segment to drop
   * @returns resolves once removed
   */
  async drop (seq: number): Promise<void> {
    const gone = this.#sealed.filter(s => s <= seq)
    this.#sealed = this.#sealed.filter(s => s > seq)
    await Promise.all(gone.map(async s => { await unlink(this.#pathOf(s)).catch(() => {}) }))
  }

  /**
   * Closes the active segment once its appends settled; an empty one is removed, so a clean stop
   * leaves no segment behind.
   * @returns resolves when closed
   */
  async close (): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    const active = this.#active
    this.#active = null
    if (active === null) return
    await Promise.all([...active.inFlight])
    fs.closeSync(active.fd)
    if (active.size === 0 && !active.broken) await unlink(this.#pathOf(active.seq)).catch(() => {})
  }

  /**
   * Seals the active segment and makes a new one active (its name durable with its first records).
   * @returns the new active segment
   */
  #rotateNow (): Segment {
    const sealed = this.#active!
    this.#sealed.push(sealed.seq)
    this.#active = this.#create(sealed.seq + 1)
    // Closed once its syncs are done (a coalesced fdatasync may still use the descriptor).
    void Promise.all([...sealed.inFlight]).then(() => { fs.close(sealed.fd, () => {}) })
    return this.#active
  }

  #create (seq: number): Segment {
    const fd = fs.openSync(this.#pathOf(seq), fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_APPEND, 0o600)
    const created = this.#folderSync.sync()
    // Awaited by the segment's first appends; a failure fails them (and only them).
    created.catch(() => {})
    // Each round writes its frames, then fdatasyncs them (see `#flush`).
    const data = new CoalescedSync(async () => {
      this.#flush(segment)
      await fdatasync(fd)
    })
    const segment: Segment = { seq, fd, size: 0, created, data, pending: [], pendingDurable: null, inFlight: new Set(), broken: false }
    return segment
  }

  #pathOf (seq: number): string {
    return path.join(this.dir, `${String(seq).padStart(16, '0')}.journal`)
  }
}
