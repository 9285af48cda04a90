/**
 * The throwaway repository of `git-cms demo`: a copy of the package's `fixtures-repo/` in a fresh
 * temporary directory, made a git repository with one commit.
 */
import { execFile } from 'node:child_process'
import { access, cp, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'

const run = promisify(execFile)

/**
 * The package's `fixtures-repo/` directory. The module runs from `lib/demo/` (tests) or
 * `dist/lib/demo/` (the build), so the package root is the nearest directory with a package.json.
 */
export async function fixturesRepoDir (): Promise<string> {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  for (;;) {
    try {
      await access(path.join(dir, 'package.json'))
      return path.join(dir, 'fixtures-repo')
    } catch {}
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error('cannot find the git-cms package directory (no package.json above lib/demo)')
    dir = parent
  }
}

/**
 * Copies fixtures-repo/ to a new temporary directory, runs `git init -b main`, sets a local
 * author and commits everything.
 */
export async function createDemoRepo (): Promise<string> {
  const source = await fixturesRepoDir()
  const dir = await mkdtemp(path.join(os.tmpdir(), 'git-cms-demo-'))
  try {
    await cp(source, dir, { recursive: true })
    await git(dir, 'init', '-q', '-b', 'main')
    await git(dir, 'config', 'user.name', 'git-cms demo')
    await git(dir, 'config', 'user.email', 'demo@git-cms.invalid')
    await git(dir, 'add', '-A')
    await git(dir, '-c', 'commit.gpgsign=false', 'commit', '-q', '--no-verify', '-m', 'Example site')
    return dir
  } catch (err) {
    await removeDemoRepo(dir)
    throw err
  }
}

/** Deletes a demo repository. */
export async function removeDemoRepo (dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true })
}

async function git (cwd: string, ...args: string[]): Promise<void> {
  // When started as `git cms demo`, git's own variables could point these commands at another repository.
  const env = { ...process.env }
  for (const name of ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_COMMON_DIR']) delete env[name]
  await run('git', args, { cwd, env })
}
