/**
 * Test helper: a real git host on loopback. `git http-backend` (git's own smart-HTTP server) runs
 * as a CGI program behind a small node:http server that demands Basic auth with a token, so a
 * remote URL of the form `http://user:token@127.0.0.1:PORT/site.git` is exercised for real.
 */
import { spawn, execFileSync } from 'node:child_process'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm, writeFile, chmod } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

interface Teardown { teardown: (fn: () => unknown) => void }

/** A running git host with one bare repository. */
export interface GitHost {
  /** `http://USER:TOKEN@127.0.0.1:PORT/site.git` */
  url: string
  /** The same URL without credentials (refused with 401). */
  publicUrl: string
  /** The token in the URL. */
  token: string
  /** The bare repository on disk. */
  bareDir: string
  /**
   * Installs (or removes, with null) a hook script in the bare repository.
   * @param name e.g. `pre-receive`
   * @param script a shell script body, or null
   */
  hook: (name: string, script: string | null) => Promise<void>
  close: () => Promise<void>
}

const EXEC_PATH = execFileSync('git', ['--exec-path'], { encoding: 'utf8' }).trim()

/**
 * Starts a git host whose bare repository is a clone of `sourceRepo` (or empty).
 * @param t the tap test (stops the host at teardown)
 * @param sourceRepo a repository whose branches seed the bare one
 * @returns the host
 */
export async function startGitHost (t: Teardown, sourceRepo?: string): Promise<GitHost> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'git-cms-host-'))
  t.teardown(async () => { await rm(root, { recursive: true, force: true }) })
  const bareDir = path.join(root, 'site.git')
  if (sourceRepo !== undefined) execFileSync('git', ['clone', '--quiet', '--bare', sourceRepo, bareDir])
  else execFileSync('git', ['init', '--quiet', '--bare', '-b', 'main', bareDir])
  execFileSync('git', ['-C', bareDir, 'config', 'http.receivepack', 'true'])
  const token = 'ghp_' + 'T0kenValue'.repeat(4)
  const user = 'cms-bot'
  const expected = 'Basic ' + Buffer.from(`${user}:${token}`).toString('base64')

  const server = createServer((req, res) => {
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' })
      res.end('unauthorized')
      return
    }
    cgi(req, res, root, user)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  const close = async (): Promise<void> => {
    server.closeAllConnections()
    await new Promise<void>(resolve => server.close(() => resolve()))
  }
  t.teardown(close)
  return {
    url: `http://${user}:${token}@127.0.0.1:${port}/site.git`,
    publicUrl: `http://127.0.0.1:${port}/site.git`,
    token,
    bareDir,
    hook: async (name, script) => {
      const file = path.join(bareDir, 'hooks', name)
      if (script === null) { await rm(file, { force: true }); return }
      await writeFile(file, `#!/bin/sh\n${script}\n`)
      await chmod(file, 0o755)
    },
    close
  }
}

/** Runs git http-backend for one request (CGI/1.1). */
function cgi (req: IncomingMessage, res: ServerResponse, root: string, user: string): void {
  const url = new URL(req.url ?? '/', 'http://localhost')
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: '1',
    REMOTE_USER: user,
    REMOTE_ADDR: '127.0.0.1',
    REQUEST_METHOD: req.method ?? 'GET',
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.replace(/^\?/, ''),
    CONTENT_TYPE: req.headers['content-type'] ?? '',
    SERVER_PROTOCOL: 'HTTP/1.1',
    GATEWAY_INTERFACE: 'CGI/1.1'
  }
  if (req.headers['content-length'] !== undefined) env.CONTENT_LENGTH = req.headers['content-length']
  if (req.headers['content-encoding'] !== undefined) env.HTTP_CONTENT_ENCODING = req.headers['content-encoding']
  if (req.headers['git-protocol'] !== undefined) env.GIT_PROTOCOL = String(req.headers['git-protocol'])
  const child = spawn(path.join(EXEC_PATH, 'git-http-backend'), [], { env, stdio: ['pipe', 'pipe', 'inherit'] })
  req.pipe(child.stdin)
  let head = Buffer.alloc(0)
  let headerDone = false
  child.stdout.on('data', (chunk: Buffer) => {
    if (headerDone) { res.write(chunk); return }
    head = Buffer.concat([head, chunk])
    const end = head.indexOf('\r\n\r\n')
    if (end === -1) return
    headerDone = true
    let status = 200
    const headers: Record<string, string> = {}
    for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
      const colon = line.indexOf(':')
      if (colon === -1) continue
      const name = line.slice(0, colon).trim()
      const value = line.slice(colon + 1).trim()
      if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0])
      else headers[name] = value
    }
    res.writeHead(status, headers)
    res.write(head.subarray(end + 4))
  })
  child.stdout.on('end', () => { if (!headerDone) res.writeHead(502); res.end() })
  child.on('error', () => { if (!res.headersSent) res.writeHead(500); res.end() })
}
