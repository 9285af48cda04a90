/** Reads git objects through one long-lived `git cat-file --batch`, restarted when it dies (a read retried once). */
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

export class CatFile {
  #child: ChildProcessWithoutNullStreams | null = null
  /** The reads asked of the running process, in the order it answers them. */
  readonly #waiting: Array<{ resolve: (object: GitObject | null) => void, reject: (err: Error) => void }> = []
  #buffer: Buffer = Buffer.alloc(0)
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
      this.#buffer = Buffer.alloc(0)
      this.#stderr = ''
      for (const request of this.#waiting.splice(0)) request.reject(err)
    })
    return child
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
        this.#waiting.shift()?.resolve(null)
        continue
      }
      const size = Number(header[2])
      if (this.#buffer.length < eol + 1 + size + 1) return
      const content = Buffer.from(this.#buffer.subarray(eol + 1, eol + 1 + size))
      this.#buffer = this.#buffer.subarray(eol + 1 + size + 1)
      this.#waiting.shift()?.resolve({ oid: header[0]!, type: header[1] as GitObject['type'], content })
    }
  }

  /**
   * Ends the process once it answered what it was asked.
   * @returns resolves once it exited
   */
  async close (): Promise<void> {
    this.#closed = true
    const child = this.#child
    if (child === null) return
    await new Promise<void>(resolve => {
      child.once('close', () => { resolve() })
      child.stdin.end()
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
