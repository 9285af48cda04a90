/**
 * Shared by the test/proxy files: the Hugo fixture (test/fixtures/proxy-site/) as a throwaway git
 * repository with a cms.config.yaml, built by Debian's `hugo` into a folder outside it.
 */
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawn } from 'node:child_process'
import net, { type AddressInfo } from 'node:net'
import { git, TEST_PASSWORD, TEST_SECRET } from './site.js'
import { BIN } from './spawn-server.js'
import { fromRoot } from './repo-root.js'

export const FIXTURE = fromRoot('test/fixtures/proxy-site/')
export const HUGO = '/usr/bin/hugo'

/** The config: `posts` gives its `url` pattern (or not), `pages` never does. */
export function proxyConfig (withUrl: boolean): string {
  return `collections:
  pages:
    folder: content
    format: md
  posts:
    folder: content/posts
    format: md
    indexFile: index
${withUrl ? '    url: "/posts/{slug}/"\n' : ''}`
}

/** A built fixture site. */
export interface ProxySite {
  /** The site repository (a git working tree with one commit). */
  repoDir: string
  /** Hugo's output folder (outside the repository). */
  publicDir: string
  /** A scratch folder beside both (removed at teardown). */
  tmp: string
}

/**
 * Copies the fixture into a git repository and builds it with hugo.
 * @param t the tap test
 * @param withUrl whether the posts collection gives its `url` pattern
 * @returns the folders
 */
export async function buildProxySite (t: { teardown: (fn: () => unknown) => void }, withUrl = true): Promise<ProxySite> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'git-cms-proxy-'))
  t.teardown(async () => { await rm(tmp, { recursive: true, force: true }) })
  const repoDir = path.join(tmp, 'site')
  const publicDir = path.join(tmp, 'public')
  await cp(FIXTURE, repoDir, { recursive: true })
  await writeFile(path.join(repoDir, 'cms.config.yaml'), proxyConfig(withUrl))
  git(repoDir, 'init', '-q', '-b', 'main')
  git(repoDir, 'add', '-A')
  git(repoDir, 'commit', '-q', '-m', 'site')
  execFileSync(HUGO, ['--source', repoDir, '--destination', publicDir, '--quiet'], { stdio: 'pipe' })
  return { repoDir, publicDir, tmp }
}

/** Whether Debian's hugo is installed. */
export function hasHugo (): boolean {
  return existsSync(HUGO)
}

/** The bootstrap tag serve injects. */
export const TAG = '<script src="/__cms/bootstrap.js" defer></script>'

/**
 * The page with the injected tag taken out again: what the site itself sent.
 * @param html the page as served
 * @returns it without the one tag
 */
export function withoutTag (html: string): string {
  const at = html.lastIndexOf(TAG)
  return at < 0 ? html : html.slice(0, at) + html.slice(at + TAG.length)
}

/**
 * Runs the real `bin/git-cms serve --port 0 <args>` (dist/ must be built) until teardown.
 * @param t the tap test
 * @param args further arguments (`--repo DIR --site DIR` ...)
 * @returns the base URL and the process's stdout so far
 */
export async function spawnServe (t: { teardown: (fn: () => unknown) => void }, args: string[]): Promise<{ url: string, stdout: () => string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
    env: { ...process.env, CMS_EDIT_PASSWORD: TEST_PASSWORD, CMS_SESSION_SECRET: TEST_SECRET, CMS_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  let err = ''
  child.stderr.on('data', (c: Buffer) => { err += c.toString() })
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /git-cms listening on (http:\/\/\S+)/.exec(out)
      if (m !== null) resolve(m[1]!)
    })
    child.once('exit', code => { reject(new Error(`exited ${code}: ${err}`)) })
  })
  return { url, stdout: () => out }
}

/**
 * Starts `hugo server` on a free port and resolves once it says it serves (killed at teardown).
 * @param t the tap test
 * @param repoDir the site
 * @param args further flags (`--disableLiveReload`)
 * @returns its origin
 */
export async function startHugoServer (t: { teardown: (fn: () => unknown) => void }, repoDir: string, args: string[] = []): Promise<string> {
  const probe = net.createServer()
  await new Promise<void>(resolve => probe.listen(0, '127.0.0.1', resolve))
  const { port } = probe.address() as AddressInfo
  await new Promise(resolve => probe.close(resolve))
  const child = spawn(HUGO, ['server', '--source', repoDir, '--bind', '127.0.0.1', '--port', String(port), ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => { child.kill('SIGKILL') })
  let out = ''
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => { out += c.toString(); if (out.includes('Web Server is available')) resolve() })
    child.stderr.on('data', (c: Buffer) => { out += c.toString() })
    child.once('exit', code => { reject(new Error(`hugo server exited ${code}: ${out}`)) })
  })
  return `http://127.0.0.1:${port}`
}
