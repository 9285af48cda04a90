/**
 * Servers in child processes: the real `bin/git-cms serve`, and any Node server (decap-server), so
 * the bench measures a server alone (its RSS is that process's, not the bench client's).
 */
import { spawn, execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { performance } from 'node:perf_hooks'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'

const execFileAsync = promisify(execFile)

/** The executable, relative to dist/bench/ (and to bench/ in the sources). */
const BIN = fileURLToPath(new URL('../../bin/git-cms', import.meta.url))

/** The editor password the bench's servers use. */
export const BENCH_PASSWORD = 'bench-password-not-secret'
/** The session secret the bench's servers use (32+ characters, unlike the password). */
export const BENCH_SECRET = 'bench-session-secret-0123456789-abcdefghijkl'

const START_TIMEOUT_MS = 60_000

/** A running server process. */
export interface CmsProcess {
  url: string
  pid: number
  /** Milliseconds from spawn to the line that says it is ready. */
  startMs: number
  /**
   * The resident set size of the server process.
   * @returns bytes
   */
  rss: () => Promise<number>
  /**
   * The peak resident set size of the server process so far (VmHWM).
   * @returns bytes
   */
  peakRss: () => Promise<number>
  /** Everything the process wrote to stderr so far. */
  stderr: () => string
  /**
   * Stops the process with SIGTERM (it finishes requests in flight), SIGKILL after 10 s.
   * @returns resolves when it has exited
   */
  stop: () => Promise<void>
}

/**
 * Spawns `node bin/git-cms serve --repo DIR --port 0` and waits for its listening line.
 * @param repoDir the site repository
 * @param env extra environment (CMS_GIT_ON_PUBLISH ...)
 * @returns the running process
 */
export async function spawnCms (repoDir: string, env: Record<string, string> = {}): Promise<CmsProcess> {
  return await spawnServer({
    args: [BIN, 'serve', '--repo', repoDir, '--port', '0'],
    env: { CMS_EDIT_PASSWORD: BENCH_PASSWORD, CMS_SESSION_SECRET: BENCH_SECRET, CMS_LOG_LEVEL: 'warn', ...env },
    ready: out => /git-cms listening on (http:\/\/\S+)/.exec(out)?.[1] ?? null
  })
}

/** How to start a Node server and tell that it is ready. */
export interface ServerSpawn {
  /** Arguments of `node`. */
  args: string[]
  /** Environment added to the bench's. */
  env: Record<string, string>
  /** Working directory (default: the bench's). */
  cwd?: string
  /**
   * Reads the server's standard output so far.
   * @returns its base URL once the server is ready, else null
   */
  ready: (stdout: string) => string | null
}

/**
 * Spawns a Node server in a child process and waits until its output says it is ready.
 * @param spec what to run and how to tell it is ready
 * @returns the running process
 */
export async function spawnServer (spec: ServerSpawn): Promise<CmsProcess> {
  const started = performance.now()
  const child = spawn(process.execPath, spec.args, { cwd: spec.cwd, env: { ...process.env, ...spec.env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let err = ''
  child.stderr.on('data', (c: Buffer) => { err += c.toString() })
  const exited = new Promise<void>(resolve => { child.once('exit', () => { resolve() }) })
  let url: string
  try {
    url = await new Promise<string>((resolve, reject) => {
      let out = ''
      const timer = setTimeout(() => { reject(new Error(`not ready after ${START_TIMEOUT_MS} ms; stderr: ${lastLines(err)}`)) }, START_TIMEOUT_MS)
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString()
        const ready = spec.ready(out)
        if (ready !== null) { clearTimeout(timer); resolve(ready) }
      })
      child.once('exit', code => { clearTimeout(timer); reject(new Error(`server exited with ${String(code)}: ${lastLines(err + out)}`)) })
    })
  } catch (error) {
    child.kill('SIGKILL')
    throw error
  }
  const startMs = performance.now() - started
  // Keep draining stdout so the child never blocks on a full pipe.
  child.stdout.removeAllListeners('data')
  child.stdout.resume()
  const pid = child.pid ?? 0
  return {
    url,
    pid,
    startMs,
    rss: async () => await processRss(pid),
    peakRss: async () => await processPeakRss(pid),
    stderr: () => err,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      const force = setTimeout(() => { child.kill('SIGKILL') }, 10_000)
      await exited
      clearTimeout(force)
    }
  }
}

/**
 * The resident set size of a process: /proc on Linux, `ps` elsewhere.
 * @param pid the process
 * @returns bytes
 */
export async function processRss (pid: number): Promise<number> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8')
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)
    if (m?.[1] !== undefined) return Number(m[1]) * 1024
  } catch {
    // Not Linux: fall through to ps.
  }
  const { stdout } = await execFileAsync('ps', ['-o', 'rss=', '-p', String(pid)])
  return Number(stdout.trim()) * 1024
}

/**
 * The peak resident set size of a live process (VmHWM in /proc; the current RSS where there is no
 * /proc).
 * @param pid the process
 * @returns bytes
 */
export async function processPeakRss (pid: number): Promise<number> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8')
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(status)
    if (m?.[1] !== undefined) return Number(m[1]) * 1024
  } catch {
    // Not Linux.
  }
  return await processRss(pid)
}

/**
 * The last lines of a process's output, for an error message.
 * @param text the output
 * @returns up to three lines joined by ' | '
 */
export function lastLines (text: string): string {
  return text.trim().split('\n').slice(-3).join(' | ')
}
