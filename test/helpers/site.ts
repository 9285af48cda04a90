/**
 * Test helpers: a throwaway copy of fixtures-repo/ as a real git repository, a real server on
 * port 0 over it, and a fingerprint of the repository's files and refs to prove that a refused
 * request changed nothing.
 */
import { cp, mkdtemp, rm, writeFile, mkdir, readdir, readFile, stat } from 'node:fs/promises'
import { createHash } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { openCms, type Cms, type CreateCmsOptions } from '../../lib/cms.js'
import { pino, type Logger } from 'pino'
import type { Services } from '../../lib/services.js'
import { fromRoot } from './repo-root.js'

export const FIXTURES_REPO = fromRoot('fixtures-repo/')
export const TEST_PASSWORD = 'correct horse battery staple'
export const TEST_SECRET = 'test-session-secret-0123456789-abcdefghij'

interface Teardown { teardown: (fn: () => unknown) => void }

/**
 * Runs git in a directory (test-only: the service itself never spawns git per request).
 * @param cwd repository directory
 * @param args git arguments
 * @returns stdout, trimmed
 */
export function git (cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 'Test', GIT_AUTHOR_EMAIL: 'test@example.invalid', GIT_COMMITTER_NAME: 'Test', GIT_COMMITTER_EMAIL: 'test@example.invalid' }
  }).trim()
}

/**
 * Copies fixtures-repo/ into a temp dir, adds extra files, and commits it all.
 * @param t the tap test (removes the dir at teardown)
 * @param files extra or replaced files, path -> content (null deletes)
 * @param opts `commit: false` leaves the repository without a commit
 * @returns the repository directory
 */
export async function makeSite (t: Teardown, files: Record<string, string | null> = {}, opts: { commit?: boolean, fixtures?: boolean } = {}): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'git-cms-test-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  if (opts.fixtures !== false) await cp(FIXTURES_REPO, dir, { recursive: true })
  for (const [rel, content] of Object.entries(files)) {
    const full = path.join(dir, rel)
    if (content === null) { await rm(full, { force: true }); continue }
    await mkdir(path.dirname(full), { recursive: true })
    await writeFile(full, content)
  }
  git(dir, 'init', '-q', '-b', 'main')
  if (opts.commit !== false) {
    git(dir, 'add', '-A')
    git(dir, 'commit', '-q', '-m', 'site')
  }
  return dir
}

/** A server under test. */
export interface TestServer {
  url: string
  repoDir: string
  cms: Cms
  /** The instance's internals, for tests that must look behind the HTTP surface. */
  services: Services
  server: Server
  /**
   * fetch against the server.
   * @param p path (with query)
   * @param init fetch options
   * @returns the response
   */
  request: (p: string, init?: RequestInit) => Promise<Response>
  /**
   * Signs in with the test password.
   * @returns the `cms_session=...` cookie pair
   */
  login: () => Promise<string>
  /** Stops the server and the instance. */
  close: () => Promise<void>
}

/**
 * Starts a real HTTP server on port 0 over a repository.
 * @param t the tap test (closes the server at teardown)
 * @param opts repository (default: a fresh fixtures copy), config, env
 * @returns the running server
 */
export async function startServer (t: Teardown, opts: Partial<CreateCmsOptions> & { files?: Record<string, string | null> } = {}): Promise<TestServer> {
  const repoDir = opts.repoDir ?? await makeSite(t, opts.files)
  const env = { CMS_EDIT_PASSWORD: TEST_PASSWORD, CMS_SESSION_SECRET: TEST_SECRET, ...opts.env }
  const { cms, services } = await openCms({ repoDir, config: opts.config, env, logger: opts.logger ?? silentLogger() })
  const server = createServer(cms.app.callback())
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    server.closeAllConnections()
    await new Promise<void>(resolve => server.close(() => resolve()))
    await cms.close()
  }
  t.teardown(close)
  const request = async (p: string, init?: RequestInit): Promise<Response> => await fetch(url + p, init)
  const login = async (): Promise<string> => {
    const res = await request(`${cms.config.apiBasePath}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ password: TEST_PASSWORD })
    })
    if (res.status !== 200) throw new Error(`login failed: ${res.status} ${await res.text()}`)
    const cookie = res.headers.get('set-cookie') ?? ''
    return cookie.split(';')[0] ?? ''
  }
  return { url, repoDir, cms, services, server, request, login, close }
}

/**
 * A logger that writes nothing (tests pass it instead of the service checking for a test run).
 * @returns a silent pino logger
 */
export function silentLogger (): Logger {
  return pino({ level: 'silent' })
}

/**
 * A fingerprint of everything a refused request must not change: every file of the working tree
 * (outside .git), `git status`, and every ref.
 * @param repoDir the repository
 * @returns a string that differs when anything changed
 */
export async function repoFingerprint (repoDir: string): Promise<string> {
  const hash = createHash('sha256')
  const walk = async (dir: string): Promise<void> => {
    for (const entry of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name === '.git') continue
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) await walk(full)
      else if (entry.isFile()) hash.update(path.relative(repoDir, full)).update(await readFile(full))
      else hash.update(path.relative(repoDir, full) + ':link')
    }
  }
  await walk(repoDir)
  hash.update(git(repoDir, 'status', '--porcelain'))
  hash.update(git(repoDir, 'for-each-ref'))
  return hash.digest('hex')
}

/**
 * JSON request headers for a mutating API call.
 * @param cookie the session cookie pair
 * @returns headers with the CSRF header and content type
 */
export function writeHeaders (cookie: string): Record<string, string> {
  return { cookie, 'content-type': 'application/json', 'x-cms-request': '1' }
}

/**
 * Serves a request listener on 127.0.0.1, port 0, closed at teardown (for a site app mounted in
 * front of the service's middleware).
 * @param t the tap test
 * @param listener e.g. `app.callback()`
 * @returns the origin (`http://127.0.0.1:PORT`) and the port
 */
export async function listenOnLoopback (t: Teardown, listener: Parameters<typeof createServer>[0] & object): Promise<{ origin: string, port: number }> {
  const server = createServer(listener)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
  })
  const port = (server.address() as AddressInfo).port
  return { origin: `http://127.0.0.1:${port}`, port }
}
