/** Starts git child processes in the environment `gitEnv` allows. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { gitEnv } from '../git-runner.js'

/**
 * Spawns git in a folder. A write to stdin after git died and a failed spawn (no git) fail quietly:
 * callers watch its 'close'.
 * @param cwd the folder git runs in (in a work tree git finds its own git directory)
 * @param args git's arguments
 * @returns the child process, its pipes open
 */
export function spawnGit (cwd: string, args: readonly string[]): ChildProcessWithoutNullStreams {
  const child = spawn('git', args, { cwd, env: gitEnv(), stdio: ['pipe', 'pipe', 'pipe'] })
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
 * @param timeoutMs git is killed after this long (its exit code is then null), or when its output passes 64 MB
 * @returns its exit code (negative when git could not start), standard output and error
 */
export async function runGit (cwd: string, args: readonly string[], timeoutMs?: number): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const child = spawnGit(cwd, args)
  const timer = timeoutMs === undefined ? undefined : setTimeout(() => child.kill(), timeoutMs)
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
    if (stdout.length > OUTPUT_MAX_CHARS) child.kill()
  })
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { if (stderr.length < OUTPUT_MAX_CHARS) stderr += chunk })
  const code = await new Promise<number | null>(resolve => child.on('close', resolve))
  clearTimeout(timer)
  return { code, stdout, stderr }
}
