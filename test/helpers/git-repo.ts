/**
 * A bare-minimum real git repository for storage tests: `git init` plus one commit, in a tap test
 * dir. It does not load the service (test/helpers/site.ts does), so storage tests stay small.
 */
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { GitStore } from '../../lib/storage/git-store.js'

interface TestDir { testdir: (content?: Record<string, string>) => string }

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.invalid',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.invalid'
}

/**
 * Runs git in a directory.
 * @param cwd the repository
 * @param args git arguments
 * @param input optional stdin
 * @returns stdout, trimmed
 */
export function gitIn (cwd: string, args: string[], input?: string): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: GIT_ENV, ...(input !== undefined ? { input } : {}) }).trim()
}

/**
 * Creates a repository with one commit in a fresh test dir.
 * @param t the tap test
 * @returns the working tree and its `.git` directory
 */
export function makeRepo (t: TestDir): { dir: string, gitDir: string } {
  const dir = t.testdir()
  gitIn(dir, ['init', '-q', '-b', 'main'])
  writeFileSync(path.join(dir, 'README.md'), 'site\n')
  gitIn(dir, ['add', '-A'])
  gitIn(dir, ['commit', '-q', '-m', 'site'])
  return { dir, gitDir: path.join(dir, '.git') }
}

/**
 * A repository with its git store (closed when the test ends).
 * @param t the tap test
 * @returns the working tree, its `.git` directory and a git store on it
 */
export function makeRepoWithStore (t: TestDir & { teardown: (fn: () => Promise<void>) => void }): { dir: string, gitDir: string, git: GitStore } {
  const repo = makeRepo(t)
  const git = new GitStore(repo.gitDir)
  t.teardown(async () => { await git.close() })
  return { ...repo, git }
}
