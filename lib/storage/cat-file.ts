/**
 * Reads git objects through one long-lived `git cat-file --batch`: answers come in request order, so
 * concurrent reads pipeline on one pipe. A process that died is started again (reads in flight retried once).
 */
import { spawnGit } from './git-process.js'
import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import { StorageUnavailableError } from '../errors.js'

/** One object as git stores it. */
export interface GitObject {
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

/** A running `git cat-file --batch`. */
class BatchProcess {
  readonly child: ChildProcessWithoutNullStreams
  readonly waiting: Array<{ resolve: (object: GitObject | null) => void, reject: (err: Error) => void }> = []
  #buffer: Buffer = Buffer.alloc(0)
  #stderr = ''

  constructor (gitDir: string, onExit: (process: BatchProcess) => void) {
    this.child = spawnGit(gitDir, [`--git-dir=${gitDir}`, 'cat-file', '--batch'])
    this.child.stdout.on('data', (chunk: Buffer) => { this.#take(chunk) })
    this.child.stderr.on('data', (chunk: Buffer) => { this.#stderr = (this.#stderr + chunk.toString()).slice(-2000) })
    this.child.on('close', () => {
      const err = new StorageUnavailableError(`git cat-file exited${this.#stderr === '' ? '' : `: ${this.#stderr.trim()}`}`)
      for (const request of this.waiting.splice(0)) request.reject(err)
      onExit(this)
    })
  }

  /** Asks for an object; the requests of one turn of the event loop go to git in one write. */
  ask (name: string): void {
    const stdin = this.child.stdin
    if (stdin.writableCorked === 0) {
      stdin.cork()
      process.nextTick(() => { stdin.uncork() })
    }
    stdin.write(`${name}\n`)
  }

  /** Parses every complete answer in the output so far. */
  #take (chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk])
    for (;;) {
      const eol = this.#buffer.indexOf(10)
      if (eol < 0) return
      const header = this.#buffer.toString('utf8', 0, eol).split(' ')
      if (header.length !== 3) { // `<name> missing` or ambiguous
        this.#buffer = this.#buffer.subarray(eol + 1)
        this.waiting.shift()?.resolve(null)
        continue
      }
      const size = Number(header[2])
      if (this.#buffer.length < eol + 1 + size + 1) return
      const content = Buffer.from(this.#buffer.subarray(eol + 1, eol + 1 + size))
      this.#buffer = this.#buffer.subarray(eol + 1 + size + 1)
      this.waiting.shift()?.resolve({ oid: header[0]!, type: header[1] as GitObject['type'], content })
    }
  }
}

/** Object reads of one repository. */
export class CatFile {
  #process: BatchProcess | null = null
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
      const process = this.#process ??= new BatchProcess(this.gitDir, exited => { if (this.#process === exited) this.#process = null })
      try {
        return await new Promise<GitObject | null>((resolve, reject) => {
          process.waiting.push({ resolve, reject })
          process.ask(name)
        })
      } catch (err) {
        if (attempt === 2 || this.#closed) throw err
      }
    }
  }

  /**
   * Ends the process once it answered what it was asked.
   * @returns resolves once it exited
   */
  async close (): Promise<void> {
    this.#closed = true
    const process = this.#process
    if (process === null) return
    await new Promise<void>(resolve => {
      process.child.once('close', () => { resolve() })
      process.child.stdin.end()
    })
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
