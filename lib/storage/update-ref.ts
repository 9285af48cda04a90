/**
 * Compare-and-swap ref updates through one long-lived `git update-ref --stdin`, one transaction at a time
 * (a failed check ends the process; the next update starts another). The ref's folders are fsynced too.
 */
import path from 'node:path'
import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import { spawnGit } from './git-process.js'
import { StorageUnavailableError } from '../errors.js'
import { syncDirectory } from './atomic-write.js'

const ZERO = '0'.repeat(40)
const OID = /^[0-9a-f]{40}$/
/** Refs we write: `refs/cms/` plus components git accepts (the callers build them). */
const REF_NAME = /^refs\/cms\/(?:[A-Za-z0-9_@%=+-][A-Za-z0-9_@%=+.-]*\/)*[A-Za-z0-9_@%=+-][A-Za-z0-9_@%=+.-]*$/
/** How long git waits for a `<ref>.lock` another process holds. */
const LOCK_TIMEOUT_MS = 1000

/**
 * Asserts that a ref name is one of ours that git accepts.
 * @param ref a full ref name such as `refs/cms/history`
 * @returns the ref name
 */
export function assertRefName (ref: string): string {
  if (!REF_NAME.test(ref) || ref.includes('..') || ref.split('/').some(c => c.endsWith('.lock') || c.endsWith('.'))) {
    throw new Error(`Invalid ref name: ${JSON.stringify(ref)}`)
  }
  return ref
}

/** The answer lines of the running process, and who waits for them. */
interface Transactions {
  child: ChildProcessWithoutNullStreams
  lines: string[]
  waiter: (() => void) | null
  exited: boolean
  stderr: string
}

export class RefUpdater {
  /** Told of every ref this updater moved (the remote link schedules the push of `refs/cms/*`). */
  readonly listeners = new Set<(ref: string) => void>()
  #process: Transactions | null = null
  /** Transactions run one after the other on the one process. */
  #tail: Promise<unknown> = Promise.resolve()

  /**
   * @param gitDir the repository's (common) git directory
   * @param readRef reads a ref's current value (to tell a refused update from a lost answer)
   */
  constructor (private readonly gitDir: string, private readonly readRef: (ref: string) => Promise<string | null>) {}

  /**
   * Points `ref` at `newOid`, or deletes it, if it still holds `expected`; transactions run one after
   * the other, and the listeners are told of a ref that moved.
   * @param ref a full ref name under `refs/cms/`
   * @param newOid the new commit, or null to delete the ref
   * @param expected the value it was built on (null: the ref must not exist)
   * @returns 'ok' once the change is durable, 'moved' when the ref held something else; throws
   *   StorageUnavailableError when git could not update it (a lock held too long)
   */
  async update (ref: string, newOid: string | null, expected: string | null): Promise<'ok' | 'moved'> {
    assertRefName(ref)
    if ([newOid, expected].some(oid => oid !== null && !OID.test(oid))) throw new Error('Invalid object id')
    const run = this.#tail.then(async () => await this.#transaction(ref, newOid, expected))
    this.#tail = run.catch(() => {})
    const outcome = await run
    if (outcome === 'ok') {
      await this.#syncDirectories(ref, newOid === null || expected === null)
      for (const listener of this.listeners) listener(ref)
    }
    return outcome
  }

  /** Ends the process (any transaction in flight finishes first). */
  async close (): Promise<void> {
    await this.#tail
    const running = this.#process
    if (running === null || running.exited) return
    await new Promise<void>(resolve => { running.child.once('close', () => { resolve() }); running.child.stdin.end() })
  }

  /** `newOid` null: delete the ref (then `expected` is set). */
  async #transaction (ref: string, newOid: string | null, expected: string | null): Promise<'ok' | 'moved'> {
    const p = this.#process !== null && !this.#process.exited ? this.#process : this.#start()
    p.lines.length = 0
    const change = newOid === null ? `delete ${ref} ${expected ?? ZERO}` : `update ${ref} ${newOid} ${expected ?? ZERO}`
    p.child.stdin.write(`start\n${change}\ncommit\n`)
    while (!p.exited && !(p.lines.length >= 2)) await new Promise<void>(resolve => { p.waiter = resolve })
    if (p.lines[0] === 'start: ok' && p.lines[1] === 'commit: ok') return 'ok'
    // git died on it: the ref tells what happened.
    const actual = await this.readRef(ref)
    if (actual === newOid) return 'ok'
    if (actual !== expected) return 'moved'
    throw new StorageUnavailableError(`${ref} could not be updated (${p.stderr.trim() || 'git update-ref exited'})`, { ref })
  }

  #start (): Transactions {
    const child = spawnGit(this.gitDir, [`--git-dir=${this.gitDir}`, '-c', 'core.fsync=reference', '-c', `core.filesRefLockTimeout=${LOCK_TIMEOUT_MS}`, 'update-ref', '--stdin'])
    const p: Transactions = { child, lines: [], waiter: null, exited: false, stderr: '' }
    let pending = ''
    const wake = (): void => { const w = p.waiter; p.waiter = null; w?.() }
    child.stdout.on('data', (chunk: Buffer) => {
      const parts = (pending + chunk.toString('utf8')).split('\n')
      pending = parts.pop() ?? ''
      p.lines.push(...parts)
      wake()
    })
    child.stderr.on('data', (chunk: Buffer) => { p.stderr = (p.stderr + chunk.toString('utf8')).slice(-2000) })
    child.on('close', () => { p.exited = true; wake() })
    this.#process = p
    return p
  }

  /** Fsyncs the ref's folder (and those up to `refs/` when git may have made or removed them) before a save goes on. */
  async #syncDirectories (ref: string, createdOrDeleted: boolean): Promise<void> {
    const dirs: string[] = []
    for (let dir = path.dirname(ref); dir !== '.'; dir = path.dirname(dir)) {
      dirs.push(path.join(this.gitDir, dir))
      if (!createdOrDeleted) break
    }
    await Promise.all(dirs.map(async dir => { await syncDirectory(dir) }))
  }
}
