/**
 * The long-lived git processes of one repository, owned by one instance and closed with it: reads
 * through one `git cat-file --batch`, restarted when it dies (a read retried once); compare-and-swap
 * ref updates through one `git update-ref --stdin`, one transaction at a time (a failed check ends
 * the process; the next update starts another), the ref's folders fsynced too.
 */
import path from 'node:path'
import { createInterface } from 'node:readline'
import { once } from 'node:events'
import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import { spawnGit } from './git-process.js'
import { StorageUnavailableError } from '../errors.js'
import { syncDirectory } from './atomic-write.js'

export class GitStore {
  readonly objects: CatFile
  readonly refs: RefUpdater

  /** @param gitDir the repository's (common) git directory */
  constructor (readonly gitDir: string) {
    this.objects = new CatFile(gitDir)
    this.refs = new RefUpdater(this)
  }

  /**
   * A ref's commit, read by git (loose or packed).
   * @param ref a full ref name
   * @returns the commit id, or null when the ref does not exist
   */
  async readRef (ref: string): Promise<string | null> {
    const object = await this.objects.read(ref)
    return object?.type === 'commit' ? object.oid : null
  }

  /**
   * Ends the git processes once they answered what they were asked.
   * @returns resolves once they exited
   */
  async close (): Promise<void> {
    await this.refs.close()
    await this.objects.close()
  }
}

/** One object as git stores it. */
interface GitObject {
  oid: string
  type: 'blob' | 'tree' | 'commit' | 'tag'
  content: Buffer
}

/** One entry of a tree object. */
export interface TreeEntry {
  mode: string
  path: string
  oid: string
  type: 'blob' | 'tree' | 'commit'
}

export class CatFile {
  #child: ChildProcessWithoutNullStreams | null = null
  /** The reads asked of the running process, in the order it answers them. */
  readonly #waiting: Array<{ resolve: (object: GitObject | null) => void, reject: (err: Error) => void }> = []
  /** Output not parsed yet, parsed once it holds `need` bytes (copying each chunk onto the ones before took 20 ms for a 4 MiB object). */
  #pending = { chunks: [] as Buffer[], bytes: 0, need: 1 }
  #stderr = ''
  #closed = false

  /** @param gitDir the repository's (common) git directory */
  constructor (private readonly gitDir: string) {}

  /**
   * Reads one object.
   * @param name an object id, a full ref name, or `<rev>:<path>`
   * @returns the object, or null when there is none by that name
   */
  async read (name: string): Promise<GitObject | null> {
    if (this.#closed) throw new StorageUnavailableError('The repository is closed')
    if (/[\n\0]/.test(name)) throw new Error(`Invalid object name: ${JSON.stringify(name)}`)
    for (let attempt = 1; ; attempt++) {
      const stdin = (this.#child ??= this.#start()).stdin
      const answer = new Promise<GitObject | null>((resolve, reject) => { this.#waiting.push({ resolve, reject }) })
      // The requests of one turn of the event loop go to git in one write.
      if (stdin.writableCorked === 0) {
        stdin.cork()
        process.nextTick(() => { stdin.uncork() })
      }
      stdin.write(`${name}\n`)
      try {
        return await answer
      } catch (err) {
        if (attempt === 2 || this.#closed) throw err
      }
    }
  }

  #start (): ChildProcessWithoutNullStreams {
    const child = spawnGit(this.gitDir, [`--git-dir=${this.gitDir}`, 'cat-file', '--batch'])
    child.stdout.on('data', (chunk: Buffer) => { this.#take(chunk) })
    child.stderr.on('data', (chunk: Buffer) => { this.#stderr = (this.#stderr + chunk.toString()).slice(-2000) })
    child.on('close', () => {
      const err = new StorageUnavailableError(`git cat-file exited${this.#stderr === '' ? '' : `: ${this.#stderr.trim()}`}`)
      this.#child = null
      this.#pending = { chunks: [], bytes: 0, need: 1 }
      this.#stderr = ''
      for (const request of this.#waiting.splice(0)) request.reject(err)
    })
    return child
  }

  /** Parses every complete answer in the output so far. */
  #take (chunk: Buffer): void {
    const pending = this.#pending
    pending.chunks.push(chunk)
    pending.bytes += chunk.length
    if (pending.bytes < pending.need) return
    let buffer = pending.chunks.length === 1 ? chunk : Buffer.concat(pending.chunks, pending.bytes)
    let need = 1
    for (;;) {
      const eol = buffer.indexOf(10)
      if (eol < 0) { need = buffer.length + 1; break }
      const header = buffer.toString('utf8', 0, eol).split(' ')
      if (header.length !== 3) { // `<name> missing` or ambiguous
        buffer = buffer.subarray(eol + 1)
        this.#waiting.shift()?.resolve(null)
        continue
      }
      const size = Number(header[2])
      need = eol + 1 + size + 1
      if (buffer.length < need) break
      const content = Buffer.from(buffer.subarray(eol + 1, eol + 1 + size))
      buffer = buffer.subarray(need)
      this.#waiting.shift()?.resolve({ oid: header[0]!, type: header[1] as GitObject['type'], content })
    }
    this.#pending = { chunks: [buffer], bytes: buffer.length, need }
  }

  /**
   * Ends the process once it answered what it was asked.
   * @returns resolves once it exited
   */
  async close (): Promise<void> {
    this.#closed = true
    if (this.#child === null) return
    this.#child.stdin.end()
    await once(this.#child, 'close')
  }
}

/**
 * A tree object's entries: `<mode> <name>\0<20-byte id>` each.
 * @param content the tree object's bytes
 * @returns its entries
 */
export function parseTree (content: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = []
  for (let at = 0; at < content.length;) {
    const space = content.indexOf(32, at)
    const nul = content.indexOf(0, space)
    const mode = content.toString('latin1', at, space)
    const oid = content.toString('hex', nul + 1, nul + 21)
    const type = mode === '40000' ? 'tree' : mode === '160000' ? 'commit' : 'blob'
    entries.push({ mode, path: content.toString('utf8', space + 1, nul), oid, type })
    at = nul + 21
  }
  return entries
}

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

/** The running process and its answer lines. */
interface Transactions {
  child: ChildProcessWithoutNullStreams
  answers: AsyncIterator<string>
  exited: boolean
  stderr: string
}

export class RefUpdater {
  /** Told of every ref this updater moved (the remote link schedules the push of `refs/cms/*`). */
  readonly listeners = new Set<(ref: string) => void>()
  #process: Transactions | null = null
  /** Transactions run one after the other on the one process. */
  #tail: Promise<unknown> = Promise.resolve()

  /** @param git the store whose refs these are (its `readRef` tells a refused update from a lost answer) */
  constructor (private readonly git: GitStore) {}

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
    running.child.stdin.end()
    await once(running.child, 'close')
  }

  /** `newOid` null: delete the ref (then `expected` is set). */
  async #transaction (ref: string, newOid: string | null, expected: string | null): Promise<'ok' | 'moved'> {
    const p = this.#process !== null && !this.#process.exited ? this.#process : this.#start()
    const change = newOid === null ? `delete ${ref} ${expected ?? ZERO}` : `update ${ref} ${newOid} ${expected ?? ZERO}`
    p.child.stdin.write(`start\n${change}\ncommit\n`)
    const started = await p.answers.next()
    if (started.value === 'start: ok' && (await p.answers.next()).value === 'commit: ok') return 'ok'
    // git dies on it (the next update starts another): the ref tells what happened.
    this.#process = null
    p.child.stdin.end()
    const actual = await this.git.readRef(ref)
    if (actual === newOid) return 'ok'
    if (actual !== expected) return 'moved'
    if (!p.exited) await once(p.child, 'close')
    throw new StorageUnavailableError(`${ref} could not be updated (${p.stderr.trim() || 'git update-ref exited'})`, { ref })
  }

  #start (): Transactions {
    const child = spawnGit(this.git.gitDir, [`--git-dir=${this.git.gitDir}`, '-c', 'core.fsync=reference', '-c', `core.filesRefLockTimeout=${LOCK_TIMEOUT_MS}`, 'update-ref', '--stdin'])
    const p: Transactions = { child, answers: createInterface({ input: child.stdout })[Symbol.asyncIterator](), exited: false, stderr: '' }
    child.stderr.on('data', (chunk: Buffer) => { p.stderr = (p.stderr + chunk.toString('utf8')).slice(-2000) })
    child.on('close', () => { p.exited = true })
    this.#process = p
    return p
  }

  /** Fsyncs the ref's folder (and those up to `refs/` when git may have made or removed them) before a save goes on. */
  async #syncDirectories (ref: string, createdOrDeleted: boolean): Promise<void> {
    const dirs: string[] = []
    for (let dir = path.dirname(ref); dir !== '.'; dir = path.dirname(dir)) {
      dirs.push(path.join(this.git.gitDir, dir))
      if (!createdOrDeleted) break
    }
    await Promise.all(dirs.map(async dir => { await syncDirectory(dir) }))
  }
}
