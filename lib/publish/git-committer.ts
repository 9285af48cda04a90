/**
 * Commits published content with the git CLI (so hooks, `index.lock` and git config apply): exactly
 * the paths a publish wrote plus the service's earlier uncommitted writes, never `git add -A`; a
 * user's own staged changes stay staged and out of it.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import { GitRunner } from '../git-runner.js'
import { writeFileAtomic } from '../storage/atomic-write.js'
import { KeyedLock } from '../storage/keyed-lock.js'

/** Paths per `git status` call: keeps the argument list far below the OS limit. */
const STATUS_CHUNK = 500

/** What one publish commits, and as whom. */
export interface CommitRequest {
  /** Repository-relative paths written by this publish. */
  paths: string[]
  author: { name: string, email: string }
  message: string
}

/** The commit's full sha (null when none of the paths differ from HEAD), or git's refusal. */
export type CommitResult = { commit: string | null } | { commitError: string }

/** The repository a GitCommitter commits in. */
export interface GitCommitterOptions {
  repoDir: string
  stateDir: string
  config: Config
  log: Logger
  /** Silence limit of one git command (default 60 s). */
  timeoutMs?: number
  /** Remember direct writes for the next commit (default true; off when publishes make no commits). */
  trackWrites?: boolean
}

/** Remembers the paths the service wrote, and commits them on publish. */
export class GitCommitter {
  readonly #git: GitRunner
  readonly #file: string
  readonly #roots: string[]
  readonly #log: Logger
  readonly #queue = new KeyedLock()
  #tracked: Set<string> | null = null
  readonly #enabled: boolean
  #scheduled: Promise<void> | null = null
  #running: Promise<void> | null = null

  constructor (opts: GitCommitterOptions) {
    this.#git = new GitRunner({ baseDir: opts.repoDir, log: opts.log, ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}) })
    this.#file = path.join(opts.stateDir, 'uncommitted.json')
    this.#roots = [opts.config.contentDir, opts.config.uploadsDir, '.cms'].map(r => r.replace(/\/+$/, '') + '/')
    this.#log = opts.log
    this.#enabled = opts.trackWrites ?? true
  }

  /** Remembers paths the service wrote (persisted, so a restart still commits them later). */
  async track (paths: string[]): Promise<void> {
    if (!this.#enabled || paths.length === 0) return
    const tracked = await this.#load()
    const known = tracked.size
    for (const p of paths) tracked.add(p)
    if (tracked.size > known) { await this.#persist(); return }
    // Already known: wait until the write that holds it is on disk.
    await this.#scheduled
    await this.#running
  }

  /** Writes the tracked set; concurrent callers share one write (the set is read when it starts). */
  async #persist (): Promise<void> {
    if (this.#scheduled !== null) return await this.#scheduled
    const scheduled: Promise<void> = this.#queue.run('state', async () => {
      this.#scheduled = null
      this.#running = scheduled
      try {
        await this.#save(await this.#load())
      } finally {
        if (this.#running === scheduled) this.#running = null
      }
    })
    this.#scheduled = scheduled
    return await scheduled
  }

  /**
   * The paths written but not yet committed.
   * @returns repository-relative paths, sorted
   */
  async pending (): Promise<string[]> {
    return await this.#queue.run('state', async () => [...await this.#load()].sort())
  }

  /** Whether tracked writes under contentDir, uploadsDir or `.cms/` still wait for a commit. */
  async hasPending (): Promise<boolean> {
    return await this.#queue.run('state', async () => [...await this.#load()].some(p => this.#committable(p)))
  }

  /**
   * Commits the paths and every tracked uncommitted path under contentDir, uploadsDir or `.cms/`;
   * returns the commit's sha, null when nothing differs from HEAD, or git's error message.
   */
  async commit (request: CommitRequest): Promise<CommitResult> {
    return await this.#queue.run('commit', async () => {
      const tracked = await this.pending()
      const wanted = new Set(request.paths)
      for (const p of tracked) if (this.#committable(p)) wanted.add(p)
      const paths = [...wanted].filter(p => isPlainRelative(p)).sort()
      if (paths.length === 0) return { commit: null }
      const author = { GIT_AUTHOR_NAME: identPart(request.author.name, 'git-cms'), GIT_AUTHOR_EMAIL: identPart(request.author.email, 'git-cms@localhost') }
      let staged = false
      let list = ''
      try {
        const { changed, ignored } = await this.#changes(paths)
        if (ignored.length > 0) this.#log.warn({ paths: ignored.slice(0, 20), count: ignored.length }, 'paths ignored by .gitignore are not committed')
        if (changed.length === 0) {
          await this.#forget(paths)
          return { commit: null }
        }
        // NUL-separated literal pathspecs on stdin: a name is never read as a glob, magic or option.
        list = changed.map(p => `:(literal)${p}\0`).join('')
        staged = true
        await this.#git.run(['add', '--all', '--pathspec-from-file=-', '--pathspec-file-nul'], { input: list })
        // `--only` commits these paths' working-tree state and nothing else (what the user staged stays staged);
        // without a configured committer (a fresh machine), the author commits.
        const env = { ...author, ...await this.#git.committerEnv(author.GIT_AUTHOR_NAME, author.GIT_AUTHOR_EMAIL) }
        await this.#git.run(['commit', '--quiet', '--only', '--no-edit', '-m', request.message, '--pathspec-from-file=-', '--pathspec-file-nul'], { input: list, env })
        staged = false
        const commit = (await this.#git.run(['rev-parse', 'HEAD'])).trim()
        await this.#forget(paths)
        return { commit }
      } catch (err) {
        // Leave the index as it was for these paths, so a refused commit stages nothing of ours.
        if (staged) await this.#git.run(['reset', '--quiet', '--pathspec-from-file=-', '--pathspec-file-nul'], { input: list }).catch(() => {})
        const message = (err as Error).message
        this.#log.warn({ commitError: message }, 'git commit of a publish failed; the files stay written and are committed by the next publish')
        return { commitError: message }
      }
    })
  }

  /** Which paths differ from HEAD and which are ignored, asked per directory (file pathspecs: `status` 7x slower). */
  async #changes (paths: string[]): Promise<{ changed: string[], ignored: string[] }> {
    const wanted = new Set(paths)
    const dirs = [...new Set(paths.map(p => path.posix.dirname(p)))].sort()
    const changed: string[] = []
    const ignored: string[] = []
    for (let i = 0; i < dirs.length; i += STATUS_CHUNK) {
      const specs = dirs.slice(i, i + STATUS_CHUNK).map(d => `:(literal)${d === '.' ? '.' : `${d}/`}`)
      const out = await this.#git.run(['status', '--porcelain=v1', '-z', '--no-renames', '--untracked-files=all', '--ignored=matching', '--', ...specs])
      for (const record of out.split('\0')) {
        if (record.length < 4) continue
        const file = record.slice(3)
        if (record.startsWith('!!')) {
          // An ignored directory is listed once, with a trailing slash, for everything below it.
          for (const p of file.endsWith('/') ? paths.filter(p => p.startsWith(file)) : wanted.has(file) ? [file] : []) ignored.push(p)
        } else if (wanted.has(file)) {
          changed.push(file)
        }
      }
    }
    return { changed: changed.sort(), ignored }
  }

  /** A tracked path a commit takes along: under contentDir, uploadsDir or `.cms/`. */
  #committable (p: string): boolean {
    return this.#roots.some(root => p.startsWith(root))
  }

  async #forget (paths: string[]): Promise<void> {
    await this.#queue.run('state', async () => {
      const tracked = await this.#load()
      let changed = false
      for (const p of paths) changed = tracked.delete(p) || changed
      if (changed) await this.#save(tracked)
    })
  }

  async #load (): Promise<Set<string>> {
    if (this.#tracked !== null) return this.#tracked
    const parsed = await readFile(this.#file, 'utf8').then(text => JSON.parse(text) as unknown).catch(() => null)
    this.#tracked = new Set(Array.isArray(parsed) ? parsed.filter((p): p is string => typeof p === 'string') : [])
    return this.#tracked
  }

  async #save (tracked: Set<string>): Promise<void> {
    await writeFileAtomic(this.#file, JSON.stringify([...tracked].sort()) + '\n')
  }
}

/** A repository-relative path that cannot name anything outside the repository or in `.git`. */
function isPlainRelative (p: string): boolean {
  return p !== '' && !p.startsWith('/') && !p.split('/').some(s => s === '..' || s === '.' || s === '' || s === '.git') && !/[\0\n\r]/.test(p)
}

/** A name or email git accepts in an identity: no angle brackets or line breaks. */
function identPart (value: string, fallback: string): string {
  const clean = value.replace(/[<>\0\r\n]/g, '').trim()
  return clean === '' ? fallback : clean
}
