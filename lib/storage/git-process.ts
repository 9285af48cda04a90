/** Starts git child processes in the environment `gitEnv` allows. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'

/** What git runs with: the operator's config, credential helpers and SSH agent, never GIT_DIR and its kind. */
const PASSED_ENV = [
  'PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TMPDIR', 'TZ', 'XDG_CONFIG_HOME',
  'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_NOSYSTEM', 'GIT_COMMITTER_NAME', 'GIT_COMMITTER_EMAIL',
  'SSH_AUTH_SOCK', 'GIT_SSH_COMMAND', 'GIT_SSH', 'GIT_SSL_CAINFO', 'GIT_SSL_NO_VERIFY',
  'HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy', 'SSL_CERT_FILE', 'SSL_CERT_DIR'
]

/** Never an editor, a pager or a password prompt: the service runs without a terminal. */
const NO_TERMINAL = { GIT_EDITOR: 'true', EDITOR: 'true', GIT_PAGER: 'cat', PAGER: 'cat', GIT_TERMINAL_PROMPT: '0' }

/**
 * The environment every git process of ours runs in: the whitelisted variables, and NO_TERMINAL's.
 * @param source the environment to take them from (default `process.env`)
 * @returns a new object
 */
export function gitEnv (source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {}
  for (const k of PASSED_ENV) {
    const v = source[k]
    if (v !== undefined) env[k] = v
  }
  return { ...env, ...NO_TERMINAL }
}

/**
 * Spawns git in a folder. A write to stdin after git died and a failed spawn (no git) fail quietly:
 * callers watch its 'close'.
 * @param cwd the folder git runs in (in a work tree git finds its own git directory)
 * @param args git's arguments
 * @param env its environment (default `gitEnv()`)
 * @returns the child process, its pipes open
 */
export function spawnGit (cwd: string, args: readonly string[], env = gitEnv()): ChildProcessWithoutNullStreams {
  const child = spawn('git', args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] })
  child.stdin.on('error', () => {})
  child.on('error', () => {})
  return child
}

/** Output a one-shot command may give (a list of 100,000 paths is about 6 MB); git is killed beyond it. */
const OUTPUT_MAX_CHARS = 64 * 1024 * 1024

/**
 * Runs one git command in a folder to its end.
 * @param cwd the folder git runs in
 * @param args git's arguments
 * @param opts git is killed after `timeoutMs` (without output, when `idle`; its exit code is then null)
 *   or when its output passes 64 MB; `input` goes to its stdin; `env` replaces `gitEnv()`
 * @returns its exit code (negative when git could not start), standard output and error
 */
export async function runGit (cwd: string, args: readonly string[], opts: { timeoutMs?: number, idle?: boolean, input?: string | Buffer, env?: Record<string, string> } = {}): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const child = spawnGit(cwd, args, opts.env)
  const timer = opts.timeoutMs === undefined ? undefined : setTimeout(() => child.kill(), opts.timeoutMs)
  const output = (): void => { if (opts.idle === true) timer?.refresh() }
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output()
    stdout += chunk
    if (stdout.length > OUTPUT_MAX_CHARS) child.kill()
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output()
    if (stderr.length < OUTPUT_MAX_CHARS) stderr += chunk
  })
  child.stdin.end(opts.input)
  const code = await new Promise<number | null>(resolve => child.on('close', resolve))
  clearTimeout(timer)
  return { code, stdout, stderr }
}
