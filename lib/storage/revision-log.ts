/**
 * The persisted revision counters of one collection: an append-only log under
 * `.git/cms/revisions/<collection>.jsonl`, one `{"id","rev","sig"}` line per change, compacted when
 * loaded. A deleted entry keeps its line (`sig: null`), so a re-created one continues its count.
 */
import { appendFileSync } from 'node:fs'
import { readFile, mkdir } from 'node:fs/promises'
import path from 'node:path'
import { writeFileAtomic } from './atomic-write.js'

/** The last known state of an entry's file. */
export interface RevisionState {
  rev: number
  /** `<size>:<mtimeMs>:<ino>` of the file at that revision; null when the entry is deleted. */
  sig: string | null
}

/** One collection's revision log. */
export class RevisionLog {
  readonly #file: string
  #lines = 0

  constructor (stateDir: string, collection: string) {
    this.#file = path.join(stateDir, 'revisions', `${collection}.jsonl`)
  }

  /**
   * Reads the log into a map, compacting it when it holds many superseded lines.
   * @returns id -> last state
   */
  async load (): Promise<Map<string, RevisionState>> {
    const states = new Map<string, RevisionState>()
    let text = ''
    try { text = await readFile(this.#file, 'utf8') } catch {}
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
    let all: unknown[] | null = null
    const body = text.endsWith('\n') ? text.slice(0, -1) : text
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
      for (const line of text.split('\n')) {
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
    if (lines > 2 * states.size + 64) await this.#compact(states)
    return states
  }

  /**
   * Appends state changes (durable against a killed process once this resolves).
   * @param changes id and new state for each changed entry
   */
  async append (changes: Array<{ id: string } & RevisionState>): Promise<void> {
    if (changes.length === 0) return
    const text = changes.map(c => JSON.stringify({ id: c.id, rev: c.rev, sig: c.sig })).join('\n') + '\n'
    // A short append to an existing file, synchronously (see quick-fs.ts): no fsync, as before,
    // and a torn last line is ignored on load.
    try {
      appendFileSync(this.#file, text)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
      await mkdir(path.dirname(this.#file), { recursive: true })
      appendFileSync(this.#file, text)
    }
    this.#lines += changes.length
  }

  async #compact (states: Map<string, RevisionState>): Promise<void> {
    const text = [...states].map(([id, s]) => JSON.stringify({ id, rev: s.rev, sig: s.sig })).join('\n')
    await writeFileAtomic(this.#file, text === '' ? '' : text + '\n')
    this.#lines = states.size
  }
}
