/**
 * Git commits of published content, made with the real git CLI (through simple-git) so that the
 * user's hooks, `index.lock` and git config apply. A commit holds exactly the paths a publish
 * wrote plus the service's earlier writes that are still uncommitted; never anything else in the
 * working tree (no `git add -A`), and a user's own staged changes stay staged and out of it.
 */
import { readFile, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { simpleGit, type SimpleGit } from 'simple-git'
import type { Logger } from 'pino'
import type { Config } from '../config.js'
import { writeFileAtomic } from '../storage/atomic-write.js'
import { KeyedLock } from '../storage/keyed-lock.js'

/** How long one git command may run before it is stopped (a hook that hangs must not hang publish). */
const GIT_TIMEOUT_MS = 60_000

export interface CommitRequest {
  /** Repository-relative paths written by this publish. */
  paths: string[]
  author: { name: string, email: string }
  message: string
}

/** The commit's full sha (null when there was nothing to commit), or git's refusal. */
export type CommitResult = { commit: string | null } | { commitError: string }

export interface GitCommitterOptions {
  repoDir: string
  stateDir: string
  config: Config
  log: Logger
}

/** Remembers the paths the service wrote, and commits them on publish. */
export class GitCommitter {
  readonly #repoDir: string
  readonly #file: string
  readonly #roots: string[]
  readonly #log: Logger
  readonly #queue = new KeyedLock()
  #tracked: Set<string> | null = null

  constructor (opts: GitCommitterOptions) {
    this.#repoDir = opts.repoDir
    this.#file = path.join(opts.stateDir, 'uncommitted.json')
    this.#roots = [opts.config.contentDir, opts.config.uploadsDir, '.cms'].map(r => r.replace(/\/+$/, '') + '/')
    this.#log = opts.log
  }

  /**
   * Remembers paths the service wrote (persisted, so a restart still commits them later).
   * @param paths repository-relative paths
   * @returns resolves when recorded
   */
  async track (paths: string[]): Promise<void> {
    if (paths.length === 0) return
    await this.#queue.run('state', async () => {
      const tracked = await this.#load()
      const before = tracked.size
      for (const p of paths) tracked.add(p)
      if (tracked.size !== before) await this.#save(tracked)
    })
  }

  /**
   * Commits the given paths and every tracked uncommitted path under contentDir, uploadsDir or `.cms/`.
   * @param request paths, author and message
   * @returns the new commit's sha, null when nothing changed, or git's error message
   */
  async commit (request: CommitRequest): Promise<CommitResult> {
    return await this.#queue.run('commit', async () => {
      const tracked = await this.#queue.run('state', async () => new Set(await this.#load()))
      const wanted = new Set(request.paths)
      for (const p of tracked) if (this.#roots.some(root => p.startsWith(root))) wanted.add(p)
      const paths = [...wanted].filter(p => isPlainRelative(p)).sort()
      if (paths.length === 0) return { commit: null }
      const git = await this.#git(request.author)
      const listFile = path.join(path.dirname(this.#file), `commit-paths-${process.pid}.txt`)
      try {
        const present = await this.#addable(git, paths)
        if (present.length === 0) {
          await this.#forget(paths)
          return { commit: null }
        }
        // Literal pathspecs: a file name is never read as a glob or as pathspec magic.
        await writeFileAtomic(listFile, present.map(p => `:(literal)${p}`).join('\n') + '\n')
        await git.raw(['add', '--all', `--pathspec-from-file=${listFile}`])
        try {
          await git.raw(['commit', '--quiet', '--no-edit', '-m', request.message, `--author=${request.author.name} <${request.author.email}>`, `--pathspec-from-file=${listFile}`])
        } catch (err) {
          // Leave the index as it was for these paths, so a refused commit stages nothing of ours.
          await git.raw(['reset', '--quiet', `--pathspec-from-file=${listFile}`]).catch(() => {})
          if (/nothing to commit|no changes added to commit/i.test(gitMessage(err))) {
            await this.#forget(paths)
            return { commit: null }
          }
          throw err
        }
        const commit = (await git.revparse(['HEAD'])).trim()
        await this.#forget(paths)
        return { commit }
      } catch (err) {
        const message = gitMessage(err)
        this.#log.warn({ commitError: message }, 'git commit of a publish failed; the files stay written and are committed by the next publish')
        return { commitError: message }
      } finally {
        await rm(listFile, { force: true })
      }
    })
  }

  /** Paths git can stage: present in the working tree, or deleted but known to git. */
  async #addable (git: SimpleGit, paths: string[]): Promise<string[]> {
    const present: string[] = []
    const missing: string[] = []
    for (const p of paths) {
      const exists = await stat(path.join(this.#repoDir, p)).then(() => true, () => false)
      if (exists) present.push(p)
      else missing.push(p)
    }
    if (missing.length === 0) return present
    const known = new Set<string>()
    for (let i = 0; i < missing.length; i += 500) {
      const out = await git.raw(['ls-files', '-z', '--', ...missing.slice(i, i + 500).map(p => `:(literal)${p}`)])
      for (const f of out.split('\0')) if (f !== '') known.add(f)
    }
    return [...present, ...missing.filter(p => known.has(p))].sort()
  }

  async #git (author: { name: string, email: string }): Promise<SimpleGit> {
    const env: Record<string, string> = stringEnv(process.env)
    const git = simpleGit({ baseDir: this.#repoDir, timeout: { block: GIT_TIMEOUT_MS } })
    // A fresh machine without user.name/email still commits: the committer is then the author.
    const name = await git.raw(['config', '--get', 'user.name']).catch(() => '')
    const email = await git.raw(['config', '--get', 'user.email']).catch(() => '')
    if (name.trim() === '' && env.GIT_COMMITTER_NAME === undefined) env.GIT_COMMITTER_NAME = author.name
    if (email.trim() === '' && env.GIT_COMMITTER_EMAIL === undefined) env.GIT_COMMITTER_EMAIL = author.email
    return git.env(env)
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
  return p !== '' && !p.startsWith('/') && !p.split('/').some(s => s === '..' || s === '' || s === '.git') && !p.includes('\0') && !p.includes('\n')
}

function gitMessage (err: unknown): string {
  const text = err instanceof Error ? err.message : String(err)
  return text.trim().split('\n').filter(Boolean).slice(0, 6).join('\n') || 'git commit failed'
}

/**
 * The environment git runs with: what it needs to find the user's config and hooks' tools, and
 * nothing that would make it start an editor, a pager or a password prompt.
 */
const PASSED_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TMPDIR', 'TZ', 'XDG_CONFIG_HOME', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_NOSYSTEM', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL']

function stringEnv (env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {}
  for (const k of PASSED_ENV) {
    const v = env[k]
    if (v !== undefined) out[k] = v
  }
  return out
}
