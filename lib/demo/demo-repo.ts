/**
 * The throwaway repository of `git-cms demo`: a copy of the package's `fixtures-repo/` in a fresh
 * temporary directory, made a git repository with one commit.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { cp, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { gitEnv } from '../storage/git-process.js'

const run = promisify(execFile)

/** The package's `fixtures-repo/`, from `lib/demo/` (tests) or `dist/lib/demo/` (the build). */
export async function fixturesRepoDir (): Promise<string> {
  const candidates = ['../../fixtures-repo/', '../../../fixtures-repo/'].map(rel => fileURLToPath(new URL(rel, import.meta.url)))
  const found = candidates.find(dir => existsSync(path.join(dir, 'cms.config.yaml')))
  if (found === undefined) throw new Error('cannot find the git-cms package\'s fixtures-repo/ (above lib/demo)')
  return found
}

/**
 * Copies fixtures-repo/ to a new temporary directory, runs `git init -b main`, sets a local
 * author and commits everything.
 */
export async function createDemoRepo (): Promise<string> {
  const source = await fixturesRepoDir()
  const dir = await mkdtemp(path.join(os.tmpdir(), 'git-cms-demo-'))
  // Without git's own variables: started as `git cms demo`, they could point at another repository.
  const git = async (...args: string[]): Promise<void> => { await run('git', args, { cwd: dir, env: gitEnv() }) }
  try {
    await cp(source, dir, { recursive: true })
    await git('init', '-q', '-b', 'main')
    await git('config', 'user.name', 'git-cms demo')
    await git('config', 'user.email', 'demo@git-cms.invalid')
    await git('add', '-A')
    await git('-c', 'commit.gpgsign=false', 'commit', '-q', '--no-verify', '-m', 'Example site')
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
