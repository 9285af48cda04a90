/**
 * Test helper for the git-remote tests: a site repository whose `origin` is a real git host on
 * loopback (git http-backend, token in the URL), a server over it with a log we can read, and
 * second clones that play the developers.
 */
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { pino } from 'pino'
import { makeSite, startServer, git, type TestServer } from './site.js'
import { startGitHost, type GitHost } from './git-http-server.js'
import type { ConfigInput } from '../../lib/config.js'

interface Teardown { teardown: (fn: () => unknown) => void }

const run = promisify(execFile)

/**
 * Runs git without blocking the event loop (the git host answers from this very process).
 * @param cwd directory
 * @param args git arguments
 * @returns stdout, trimmed
 */
export async function gitAsync (cwd: string, ...args: string[]): Promise<string> {
  const env = { ...process.env, GIT_AUTHOR_NAME: 'Dev', GIT_AUTHOR_EMAIL: 'dev@example.invalid', GIT_COMMITTER_NAME: 'Dev', GIT_COMMITTER_EMAIL: 'dev@example.invalid', GIT_TERMINAL_PROMPT: '0' }
  const { stdout } = await run('git', args, { cwd, env, maxBuffer: 64 * 1024 * 1024 })
  return stdout.trim()
}

export const API = '/api/cms'
export const SYNC_SECRET = 'sync-secret-0123456789abcdef'

export const remoteConfig = {
  auth: { provider: 'trusted-header' as const, idHeader: 'x-user', nameHeader: 'x-user-name', rolesHeader: 'x-user-roles' },
  permissions: { publisher: ['*' as const], writer: ['edit' as const] },
  collections: { notes: { format: 'json' as const }, posts: { format: 'md' as const } },
  git: { remote: 'origin', pullInterval: 0, syncSecret: SYNC_SECRET }
}

export const remoteFiles: Record<string, string> = {
  'content/notes/a.json': '{"n":0}\n',
  'content/notes/b.json': '{"n":0}\n',
  'content/posts/hello.md': '---\ntitle: Hello\n---\nFirst body.\n',
  'README.md': '# site\n',
  'src/layout.html': '<main></main>\n'
}

/** A server whose site has a git host as origin. */
export interface RemoteSite {
  s: TestServer
  host: GitHost
  /** Every log line the instance wrote. */
  logs: string[]
  /** An API client acting as one editor. */
  as: (id: string, name?: string, roles?: string) => Editor
}

export interface Editor {
  get: (p: string) => Promise<Response>
  post: (p: string, body?: unknown) => Promise<Response>
}

/**
 * A site, its git host and a server over it.
 * @param t the test
 * @param opts config overrides, extra files, environment
 * @returns the running site
 */
export async function startRemoteSite (t: Teardown, opts: { config?: Partial<ConfigInput>, files?: Record<string, string>, env?: Record<string, string> } = {}): Promise<RemoteSite> {
  const repoDir = await makeSite(t, { ...remoteFiles, ...opts.files }, { fixtures: false })
  const host = await startGitHost(t, repoDir)
  git(repoDir, 'remote', 'add', 'origin', host.url)
  await gitAsync(repoDir, 'fetch', '--quiet', 'origin')
  git(repoDir, 'branch', '--quiet', '--set-upstream-to=origin/main', 'main')
  const logs: string[] = []
  const sink = new Writable({ write (chunk: Buffer, _enc, done) { logs.push(chunk.toString()); done() } })
  const logger = pino({ level: 'debug' }, sink)
  const config = { ...remoteConfig, ...opts.config, git: opts.config?.git ?? remoteConfig.git } as ConfigInput
  const s = await startServer(t, { repoDir, config, logger, env: { CMS_GIT_ON_PUBLISH: 'true', ...opts.env } })
  const as = (id: string, name = id, roles = 'publisher'): Editor => {
    const headers = { 'x-user': id, 'x-user-name': name, 'x-user-roles': roles }
    return {
      get: async (p) => await s.request(API + p, { headers }),
      post: async (p, body) => await s.request(API + p, { method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'x-cms-request': '1' }, body: JSON.stringify(body ?? {}) })
    }
  }
  return { s, host, logs, as }
}

/** A developer's clone of the git host. */
export interface DevClone {
  dir: string
  /**
   * Writes files, commits them and pushes.
   * @param files path -> content (null deletes)
   * @param message the commit message
   * @param pushArgs extra push arguments (`--force`)
   * @returns the new commit
   */
  commitAndPush: (files: Record<string, string | null>, message: string, pushArgs?: string[]) => Promise<string>
  git: (...args: string[]) => string
}

/**
 * Clones the host as a developer would.
 * @param t the test
 * @param host the git host
 * @returns the clone
 */
export async function devClone (t: Teardown, host: GitHost): Promise<DevClone> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'git-cms-dev-'))
  t.teardown(async () => { await rm(root, { recursive: true, force: true }) })
  const dir = path.join(root, 'clone')
  await gitAsync(root, 'clone', '--quiet', host.url, dir)
  return {
    dir,
    git: (...args) => git(dir, ...args),
    commitAndPush: async (files, message, pushArgs = []) => {
      await gitAsync(dir, 'pull', '--quiet', '--ff-only')
      for (const [rel, content] of Object.entries(files)) {
        const full = path.join(dir, rel)
        if (content === null) { await rm(full, { force: true }); continue }
        await mkdir(path.dirname(full), { recursive: true })
        await writeFile(full, content)
      }
      git(dir, 'add', '-A')
      git(dir, 'commit', '--quiet', '-m', message)
      await gitAsync(dir, 'push', '--quiet', ...pushArgs, 'origin', 'HEAD:main')
      return git(dir, 'rev-parse', 'HEAD')
    }
  }
}

/**
 * The value of a ref in the host's bare repository.
 * @param host the git host
 * @param ref a ref name
 * @returns the sha, or '' when absent
 */
export function hostRef (host: GitHost, ref: string): string {
  try { return git(host.bareDir, 'rev-parse', '--verify', '--quiet', ref) } catch { return '' }
}
