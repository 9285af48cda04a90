/**
 * Starts git child processes without the caller's `GIT_*` variables, with a handler on stdin (a
 * write after the process died fails quietly; its exit is what callers watch).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'

/**
 * Spawns `git --git-dir=<gitDir> <args>`.
 * @param gitDir the git directory
 * @param args git's arguments
 * @returns the child process, its pipes open
 */
export function spawnGit (gitDir: string, args: readonly string[]): ChildProcessWithoutNullStreams {
  return spawnIn(gitDir, [`--git-dir=${gitDir}`, ...args])
}

/**
 * Spawns git in a work tree, which finds its own git directory (a `git worktree` checkout's HEAD
 * is its own, not the main one's).
 * @param workTree the repository's work tree
 * @param args git's arguments
 * @returns the child process, its pipes open
 */
export function spawnGitInWorkTree (workTree: string, args: readonly string[]): ChildProcessWithoutNullStreams {
  return spawnIn(workTree, args)
}

/**
 * The environment git runs in: ours without its `GIT_*` variables (GIT_DIR and friends would point
 * git elsewhere than the repository we serve).
 * @returns a copy of `process.env`
 */
export function gitEnv (): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('GIT_')))
}

function spawnIn (cwd: string, args: readonly string[]): ChildProcessWithoutNullStreams {
  const child = spawn('git', args, { cwd, env: gitEnv(), stdio: ['pipe', 'pipe', 'pipe'] })
  child.stdin.on('error', () => {})
  // A failed spawn (no git) is reported as a close with no answers; 'error' must not throw.
  child.on('error', () => {})
  return child
}
