/**
 * Test helper: the real `bin/git-cms serve` in a child process (for SIGKILL and restart tests).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { TEST_PASSWORD, TEST_SECRET } from './site.js'
import { fromRoot } from './repo-root.js'

export const BIN = fromRoot('bin/git-cms')

/** A spawned server. */
export interface SpawnedServer {
  url: string
  child: ChildProcess
  /** Everything the process wrote to stderr so far. */
  stderr: () => string
  /**
   * Kills the process with a signal and waits for it to exit.
   * @param signal the signal
   * @returns the exit code (null when killed by a signal)
   */
  kill: (signal: NodeJS.Signals) => Promise<number | null>
}

interface Teardown { teardown: (fn: () => unknown) => void }

/** Long enough for a start on a loaded CI machine: the limit only catches a hang. */
const START_LIMIT_MS = 90_000

/**
 * Spawns `git-cms serve --repo DIR --port 0` and waits for its listening line.
 * @param t the tap test (kills the process at teardown)
 * @param repoDir the repository
 * @param env extra environment
 * @returns the running server
 */
export async function spawnServer (t: Teardown, repoDir: string, env: Record<string, string> = {}): Promise<SpawnedServer> {
  return await spawnServe(t, ['--repo', repoDir], env)
}

/**
 * Spawns `git-cms serve --clone URL --repo DIR --port 0` (a new instance cloned from the site's
 * remote) and waits for its listening line.
 * @param t the tap test (kills the process at teardown)
 * @param url the remote to clone
 * @param dir the empty or missing directory to clone into
 * @param env extra environment
 * @returns the running server
 */
export async function spawnCloneServer (t: Teardown, url: string, dir: string, env: Record<string, string> = {}): Promise<SpawnedServer> {
  return await spawnServe(t, ['--clone', url, '--repo', dir], env)
}

async function spawnServe (t: Teardown, args: string[], env: Record<string, string>): Promise<SpawnedServer> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args, '--port', '0'], {
    env: { ...process.env, CMS_EDIT_PASSWORD: TEST_PASSWORD, CMS_SESSION_SECRET: TEST_SECRET, CMS_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let err = ''
  child.stderr.on('data', (c: Buffer) => { err += c.toString() })
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`no listening line; stderr: ${err}`)), START_LIMIT_MS)
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /git-cms listening on (http:\/\/\S+)/.exec(out)
      if (m !== null) { clearTimeout(timer); resolve(m[1]!) }
    })
    child.once('exit', code => { clearTimeout(timer); reject(new Error(`exited ${code}: ${err}`)) })
  })
  return {
    url,
    child,
    stderr: () => err,
    kill: async (signal) => { child.kill(signal); return await exited }
  }
}

/**
 * Signs in to a server by URL with the test password.
 * @param url the server's base URL
 * @returns the `cms_session=...` cookie pair
 */
export async function loginAt (url: string): Promise<string> {
  const res = await fetch(`${url}/api/cms/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: TEST_PASSWORD }) })
  if (res.status !== 200) throw new Error(`login failed: ${res.status}`)
  return (res.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
}
