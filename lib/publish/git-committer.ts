/**
 * Commits published content with the git CLI (so hooks, `index.lock` and git config apply): exactly
 * the paths a publish wrote plus the service's earlier uncommitted writes, never `git add -A`; a
 * user's own staged changes stay staged and out of it.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { SimpleGit } from 'simple-git'
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import { writeFileAtomic } from '../storage/atomic-write.js'
import { KeyedLock } from '../storage/keyed-lock.js'

/** How long one git command may stay silent before it is stopped (a hook that hangs must not hang publish). */
const GIT_TIMEOUT_MS = 60_000

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
  /**
   * Remember direct writes for the next commit (default true). Off when publishes make no
   * commits (`CMS_GIT_ON_PUBLISH` unset), so the list never grows without end.
   */
  trackWrites?: boolean
}

/** The git variables we set ourselves; simple-git refuses any other `GIT_*` key. */
const OUR_GIT_ENV = ['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL', 'GIT_EDITOR', 'GIT_PAGER', 'GIT_TERMINAL_PROMPT', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_NOSYSTEM', 'PAGER', 'EDITOR']

/** Remembers the paths the service wrote, and commits them on publish. */
export class GitCommitter {
  readonly #repoDir: string
  readonly #file: string
  readonly #roots: string[]
  readonly #log: Logger
  readonly #timeoutMs: number
  readonly #queue = new KeyedLock()
  #tracked: Set<string> | null = null
  readonly #enabled: boolean
  #scheduled: Promise<void> | null = null
  #running: Promise<void> | null = null

  constructor (opts: GitCommitterOptions) {
    this.#repoDir = opts.repoDir
    this.#file = path.join(opts.stateDir, 'uncommitted.json')
    this.#roots = [opts.config.contentDir, opts.config.uploadsDir, '.cms'].map(r => r.replace(/\/+$/, '') + '/')
    this.#log = opts.log
    this.#timeoutMs = opts.timeoutMs ?? GIT_TIMEOUT_MS
    this.#enabled = opts.trackWrites ?? true
  }

  /**
   * Remembers paths the service wrote (persisted, so a restart still commits them later).
   * @returns resolves when recorded
   */
  async track (paths: string[]): Promise<void> {
    if (!this.#enabled || paths.length === 0) return
    const tracked = await this.#load()
    let added = false
    for (const p of paths) {
      if (!tracked.has(p)) { tracked.add(p); added = true }
    }
    if (added) { await this.#persist(); return }
    // Already known: wait until the write that holds it is on disk.
    await this.#scheduled
    await this.#running
  }

  /**
   * Writes the tracked set; concurrent callers share one write (the set is read when it starts).
   * @returns resolves when a write that started after the call has finished
   */
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
      let list = Buffer.alloc(0)
      const git = await this.#git(request.author, () => list)
      let staged = false
      try {
        const { changed, ignored } = await this.#changes(git, paths)
        if (ignored.length > 0) this.#log.warn({ paths: ignored.slice(0, 20), count: ignored.length }, 'paths ignored by .gitignore are not committed')
        if (changed.length === 0) {
          await this.#forget(paths)
          return { commit: null }
        }
        // NUL-separated literal pathspecs on stdin: a name is never read as a glob, magic or option.
        list = Buffer.from(changed.map(p => `:(literal)${p}\0`).join(''))
        staged = true
        await git.raw(['add', '--all', '--pathspec-from-file=-', '--pathspec-file-nul'])
        // `--only` (the default with paths) commits these paths' working-tree state and nothing
        // else; whatever the user staged stays staged for their own next commit.
        await git.raw(['commit', '--quiet', '--only', '--no-edit', '-m', request.message, '--pathspec-from-file=-', '--pathspec-file-nul'])
        staged = false
        const commit = (await git.revparse(['HEAD'])).trim()
        await this.#forget(paths)
        return { commit }
      } catch (err) {
        // Leave the index as it was for these paths, so a refused commit stages nothing of ours.
        if (staged) await git.raw(['reset', '--quiet', '--pathspec-from-file=-', '--pathspec-file-nul']).catch(() => {})
        const message = /block timeout/.test(gitMessage(err)) ? `git timed out after ${this.#timeoutMs} ms` : gitMessage(err)
        this.#log.warn({ commitError: message }, 'git commit of a publish failed; the files stay written and are committed by the next publish')
        return { commitError: message }
      }
    })
  }

  /**
   * Which paths differ from HEAD and which are ignored. git is asked about the paths' directories
   * and the answer filtered: a thousand file pathspecs made `status` seven times slower.
   */
  async #changes (git: SimpleGit, paths: string[]): Promise<{ changed: string[], ignored: string[] }> {
    const wanted = new Set(paths)
    const dirs = [...new Set(paths.map(p => path.posix.dirname(p)))].sort()
    const changed: string[] = []
    const ignored: string[] = []
    for (let i = 0; i < dirs.length; i += STATUS_CHUNK) {
      const specs = dirs.slice(i, i + STATUS_CHUNK).map(d => `:(literal)${d === '.' ? '.' : `${d}/`}`)
      const out = await git.raw(['status', '--porcelain=v1', '-z', '--no-renames', '--untracked-files=all', '--ignored=matching', '--', ...specs])
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

  async #git (author: { name: string, email: string }, input: () => Buffer): Promise<SimpleGit> {
    const env: Record<string, string> = passedEnv(process.env)
    // Never an editor, a pager or a password prompt: publish runs without a terminal.
    Object.assign(env, { GIT_EDITOR: 'true', EDITOR: 'true', GIT_PAGER: 'cat', PAGER: 'cat', GIT_TERMINAL_PROMPT: '0' })
    const name = identPart(author.name, 'git-cms')
    const email = identPart(author.email, 'git-cms@localhost')
    env.GIT_AUTHOR_NAME = name
    env.GIT_AUTHOR_EMAIL = email
    // The editor/pager keys are ours (`true`, `cat`); GIT_CONFIG_GLOBAL/NOSYSTEM are the service's
    // own environment, passed on so git reads the same config the operator's shell would.
    const unsafe = { allowUnsafeEditor: true, allowUnsafePager: true, allowUnsafeConfigPaths: true }
    // Done when the output closes, not 50 ms after exit (simple-git's default returned an empty
    // HEAD on a busy event loop); a silent command still times out.
    const options = { baseDir: this.#repoDir, timeout: { block: this.#timeoutMs }, completion: { onClose: true, onExit: false }, allowEnvironment: OUR_GIT_ENV, unsafe, input }
    // simple-git loads on the first commit, not at start-up.
    const { simpleGit } = await import('simple-git')
    const probe = simpleGit(options).env(env)
    // A fresh machine without user.name/email still commits: the committer is then the author.
    const configured = await probe.raw(['config', '--get-regexp', '^user\\.(name|email)$']).catch(() => '')
    if (!/^user\.name /m.test(configured)) env.GIT_COMMITTER_NAME ??= name
    if (!/^user\.email /m.test(configured)) env.GIT_COMMITTER_EMAIL ??= email
    return simpleGit(options).env(env)
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
    try {
      const parsed = JSON.parse(await readFile(this.#file, 'utf8')) as unknown
      this.#tracked = new Set(Array.isArray(parsed) ? parsed.filter((p): p is string => typeof p === 'string') : [])
    } catch {
      this.#tracked = new Set()
    }
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

function gitMessage (err: unknown): string {
  const text = err instanceof Error ? err.message : String(err)
  return text.trim().split('\n').filter(Boolean).slice(0, 6).join('\n') || 'git commit failed'
}

/**
 * The environment git runs with: what it needs to find the user's config and hooks' tools, and
 * nothing that points it elsewhere (GIT_DIR, GIT_INDEX_FILE, ...).
 */
const PASSED_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TMPDIR', 'TZ', 'XDG_CONFIG_HOME', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_NOSYSTEM', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL']

function passedEnv (env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {}
  for (const k of PASSED_ENV) {
    const v = env[k]
    if (v !== undefined) out[k] = v
  }
  return out
}
