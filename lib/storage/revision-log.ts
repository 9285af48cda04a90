/**
 * The persisted revision counters of one collection: an append-only log under
 * `.git/cms/revisions/<collection>.jsonl`, one `{"id","rev","sig"}` line per change, compacted when
 * loaded. A deleted entry keeps its line (`sig: null`), so a re-created one continues its count.
 * A compaction writes one checkpoint line first, `{"checkpoint":1,"ids":[...],"revs":[...],"sigs":[...]}`
 * (three arrays parse several times faster than one object per entry: issue 18, restart), then the
 * appended lines follow as before. Since issue 18's sixth pass the checkpoint is written as
 * `{"checkpoint":2,"ids":"a\nb...","revs":[...],"sigs":"s\n\n..."}`: the ids and the signatures
 * each one string joined by newlines (a deleted entry's null an empty one), which parses 2-5x
 * faster than arrays of 100,000 strings (split is a scan; a JSON array makes each string from its
 * escapes); a log whose ids or signatures hold a newline (or an empty signature) keeps format 1,
 * which is still read. The file is replaced atomically, so a crash leaves the old log or
 * the new one; an older build's log (lines only) is still read, and becomes a checkpoint on its
 * next compaction.
 */
import { appendFileSync } from 'node:fs'
import { readFile, mkdir, stat } from 'node:fs/promises'
import path from 'node:path'
import { writeFileAtomic } from './atomic-write.js'

/** The last known state of an entry's file. */
export interface RevisionState {
  rev: number
  /** `<size>:<mtimeMs>:<ino>` of the file at that revision; null when the entry is deleted. */
  sig: string | null
}

/** The start of a checkpoint line (format 1: arrays). */
const CHECKPOINT = '{"checkpoint":1,'
/** The start of a checkpoint line of format 2 (newline-joined strings). */
const CHECKPOINT_JOINED = '{"checkpoint":2,'
/** From this many lines after the checkpoint on, a load compacts when they are a quarter of the states. */
const COMPACT_MIN_LINES = 1024
/** A compaction due at load waits this long (the first requests go first), or for the next append. */
const COMPACT_DELAY_MS = 1000

/** One collection's revision log. */
export class RevisionLog {
  readonly #file: string
  #lines = 0
  /** A compaction decided at load and not yet written (an append writes it first). */
  #pending: { ids: string[], revs: number[], sigs: Array<string | null>, bytes: number, timer: NodeJS.Timeout } | null = null
  #compacting: Promise<void> = Promise.resolve()
  /** Lines appended in this turn's microtasks, written together once they have run (see `append`). */
  #batch: { text: string, lines: number, written: Promise<void> | null } | null = null

  constructor (stateDir: string, collection: string) {
    this.#file = path.join(stateDir, 'revisions', `${collection}.jsonl`)
  }

  /** The log file's path (a snapshot records a digest of its bytes: `index-snapshot.ts`). */
  get file (): string {
    return this.#file
  }

  /**
   * Writes a compaction planned at load now rather than later, and waits for any in flight.
   * @returns resolves once the file holds what it will hold until the next append
   */
  async settle (): Promise<void> {
    if (this.#pending !== null) this.#compact()
    await this.#compacting
  }

  /**
   * Reads the log into a map, compacting it when it holds many lines after its checkpoint.
   * @returns id -> last state
   */
  async load (): Promise<Map<string, RevisionState>> {
    const states = new Map<string, RevisionState>()
    let text = ''
    let bytes = 0
    try {
      const data = await readFile(this.#file)
      bytes = data.length
      text = data.toString('utf8')
    } catch {}
    let lines = 0
    const take = (parsed: unknown): void => {
      const line = parsed as { id: unknown, rev: unknown, sig: unknown }
      const { id, rev, sig } = line
      if (typeof id !== 'string' || typeof rev !== 'number' || !(typeof sig === 'string' || sig === null)) return
      const prev = states.get(id)
      // Revisions only grow: a torn or replayed line can never lower one. The parsed line is the
      // state (its id left on it): no second object per line at 100,000 lines.
      if (prev === undefined || rev >= prev.rev) states.set(id, line as RevisionState)
    }
    let rest = text
    const arrays = text.startsWith(CHECKPOINT)
    if (arrays || text.startsWith(CHECKPOINT_JOINED)) {
      const end = text.indexOf('\n')
      rest = end < 0 ? '' : text.slice(end + 1)
      this.#takeCheckpoint(end < 0 ? text : text.slice(0, end), states)
    }
    let all: unknown[] | null = null
    const body = rest.endsWith('\n') ? rest.slice(0, -1) : rest
    try {
      // Every line at once (one parse of 100,000 lines is several times faster than 100,000 parses).
      all = body === '' ? [] : JSON.parse(`[${body.replaceAll('\n', ',')}]`) as unknown[]
    } catch {
      // A torn line somewhere: line by line below.
    }
    if (all !== null) {
      for (const parsed of all) {
        if (typeof parsed === 'object' && parsed !== null) take(parsed)
        lines++
      }
    } else {
      for (const line of rest.split('\n')) {
        if (line === '') continue
        lines++
        try {
          take(JSON.parse(line))
        } catch {
          // A torn last line (a crash mid-append) is ignored.
        }
      }
    }
    this.#lines = lines
    if (lines > 2 * states.size + 64 || (lines >= COMPACT_MIN_LINES && lines * 4 > states.size)) this.#planCompaction(states, bytes)
    // A large format 1 checkpoint (an older build's) is rewritten as format 2 once, when it can be.
    else if (arrays && states.size >= COMPACT_MIN_LINES && [...states].every(([id, state]) => joinable(id, state.sig))) this.#planCompaction(states, bytes)
    return states
  }

  /**
   * Appends state changes (durable against a killed process once this resolves).
   * @param changes id and new state for each changed entry
   */
  async append (changes: Array<{ id: string } & RevisionState>): Promise<void> {
    if (changes.length === 0) return
    // After a planned compaction (which holds the states as loaded), never before it.
    if (this.#pending !== null) this.#compact()
    await this.#compacting
    const text = changes.map(c => JSON.stringify({ id: c.id, rev: c.rev, sig: c.sig })).join('\n') + '\n'
    // The appends of one turn's microtasks go out in one write (the saves of a landed group record
    // their writes one after another: one open/write/close of the log for them all instead of one
    // each, issue 18). Each call still resolves only once its lines are written.
    let batch = this.#batch
    if (batch === null) {
      batch = { text: '', lines: 0, written: null }
      const started = batch
      this.#batch = started
      started.written = new Promise<void>((resolve, reject) => {
        queueMicrotask(() => {
          if (this.#batch === started) this.#batch = null
          this.#write(started.text, started.lines).then(resolve, reject)
        })
      })
    }
    batch.text += text
    batch.lines += changes.length
    await batch.written
  }

  /** Appends lines (a batch of `append` calls). */
  async #write (text: string, lines: number): Promise<void> {
    // A short append to an existing file, synchronously (see quick-fs.ts): no fsync, as before,
    // and a torn last line is ignored on load.
    try {
      appendFileSync(this.#file, text)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
      await mkdir(path.dirname(this.#file), { recursive: true })
      appendFileSync(this.#file, text)
    }
    this.#lines += lines
  }

  /** Reads a checkpoint line into the states (ignored when malformed: the lines after it still count). */
  #takeCheckpoint (line: string, states: Map<string, RevisionState>): void {
    let parsed: { ids?: unknown, revs?: unknown, sigs?: unknown }
    try { parsed = JSON.parse(line) as typeof parsed } catch { return }
    const { revs } = parsed
    let { ids, sigs } = parsed
    // Format 2: newline-joined strings (a null signature an empty one).
    if (typeof ids === 'string' && typeof sigs === 'string') {
      ids = ids.split('\n')
      sigs = sigs.split('\n').map(sig => sig === '' ? null : sig)
    }
    if (!Array.isArray(ids) || !Array.isArray(revs) || !Array.isArray(sigs) || revs.length !== ids.length || sigs.length !== ids.length) return
    for (let i = 0; i < ids.length; i++) {
      const id: unknown = ids[i]
      const rev: unknown = revs[i]
      const sig: unknown = sigs[i]
      if (typeof id !== 'string' || typeof rev !== 'number' || !(typeof sig === 'string' || sig === null)) continue
      const prev = states.get(id)
      if (prev === undefined || rev >= prev.rev) states.set(id, { rev, sig })
    }
  }

  /**
   * Takes the states as loaded (the index changes the map afterwards, never its state objects) and
   * writes them a little later, or before the next append, whichever comes first.
   * @param bytes the log's size as loaded: a log that grew since (another instance of this class
   *   over the same collection appended) is left for a later load
   */
  #planCompaction (states: Map<string, RevisionState>, bytes: number): void {
    const ids: string[] = []
    const revs: number[] = []
    const sigs: Array<string | null> = []
    for (const [id, state] of states) { ids.push(id); revs.push(state.rev); sigs.push(state.sig) }
    const timer = setTimeout(() => { this.#compact() }, COMPACT_DELAY_MS)
    timer.unref()
    this.#pending = { ids, revs, sigs, bytes, timer }
  }

  #compact (): void {
    const pending = this.#pending
    if (pending === null) return
    this.#pending = null
    clearTimeout(pending.timer)
    const { ids, revs, sigs, bytes } = pending
    this.#compacting = this.#compacting.then(async () => {
      if ((await stat(this.#file)).size !== bytes) return
      const joined = ids.every((id, i) => joinable(id, sigs[i]!))
      const text = ids.length === 0
        ? ''
        : joined
          ? `${CHECKPOINT_JOINED}"ids":${JSON.stringify(ids.join('\n'))},"revs":${JSON.stringify(revs)},"sigs":${JSON.stringify(sigs.map(sig => sig ?? '').join('\n'))}}\n`
          : `${CHECKPOINT}"ids":${JSON.stringify(ids)},"revs":${JSON.stringify(revs)},"sigs":${JSON.stringify(sigs)}}\n`
      await writeFileAtomic(this.#file, text)
      this.#lines = 0
    }).catch(() => {
      // Not written (a full disk): the log stays as it was, and is compacted at a later load.
    })
  }
}

/** Whether a state can go into a format 2 checkpoint (no newline in its id or signature, no empty signature). */
function joinable (id: string, sig: string | null): boolean {
  return !id.includes('\n') && (sig === null || (sig !== '' && !sig.includes('\n')))
}
