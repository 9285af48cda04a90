/**
 * decap-server (Decap CMS's local git backend, a dev dependency) in a child process, on loopback,
 * in its git mode over a site repository, and a client for its one endpoint: `POST /api/v1` with
 * `{ action, params }`.
 */
import { createRequire } from 'node:module'
import net from 'node:net'
import path from 'node:path'
import { ApiClient, type Timed } from './api-client.js'
import { spawnServer, type CmsProcess } from './cms-process.js'

/**
 * A free loopback port (decap-server takes its port from PORT and prints the one it was given, so
 * it cannot be asked for port 0).
 * @returns the port
 */
async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => { resolve(typeof address === 'object' && address !== null ? address.port : 0) })
    })
  })
}

/**
 * Starts decap-server in git mode on a repository, bound to 127.0.0.1, and waits until it listens
 * and has registered its git routes (it registers them after validating the repository).
 * @param repoDir the site repository (its branch `main` is the one edited)
 * @returns the running process
 */
export async function spawnDecap (repoDir: string): Promise<CmsProcess> {
  const entry = path.join(path.dirname(createRequire(import.meta.url).resolve('decap-server/package.json')), 'dist', 'index.js')
  const port = await freePort()
  return await spawnServer({
    args: [entry],
    // cwd: decap-server reads a .env from it; the site has none.
    cwd: repoDir,
    env: { MODE: 'git', GIT_REPO_DIRECTORY: repoDir, PORT: String(port), BIND_HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    ready: out => /listening on/.test(out) && /configured with/.test(out) ? `http://127.0.0.1:${port}` : null
  })
}

/** A client of decap-server's API, timing each action like ApiClient times a request. */
export class DecapClient {
  private readonly api: ApiClient

  /**
   * @param baseUrl the server (`http://127.0.0.1:PORT`)
   * @param branch the branch edited
   */
  constructor (baseUrl: string, readonly branch = 'main') {
    this.api = new ApiClient(baseUrl, '/api/v1')
  }

  /**
   * Runs one action.
   * @param action the action's name (entriesByFolder, getEntry, persistEntry ...)
   * @param params its parameters, besides the branch
   * @returns the parsed answer and the time
   */
  async action<T> (action: string, params: Record<string, unknown> = {}): Promise<Timed<T>> {
    return await this.api.post<T>('', { action, params: { branch: this.branch, ...params } })
  }

  /** Closes the client's kept-alive connection. */
  close (): void {
    this.api.close()
  }
}
