/**
 * Git-level checks and resets of a site repository, through the git CLI only.
 */
import { rm } from 'node:fs/promises'
import path from 'node:path'
import { execFile } from 'node:child_process'
import { runGit } from './site-generator.js'

/**
 * Runs `git fsck --full --strict` (dangling objects are not errors) and counts what it reports.
 * @param dir the repository
 * @returns the number of error lines (at least 1 when fsck fails without saying why) and the first
 */
export async function fsckErrors (dir: string): Promise<{ errors: number, first: string | null }> {
  return await new Promise(resolve => {
    execFile('git', ['fsck', '--full', '--strict', '--no-dangling', '--no-progress'], { cwd: dir, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const lines = `${stdout}\n${stderr}`.split('\n').map(l => l.trim()).filter(l => l !== '' && !l.startsWith('notice:'))
      const failed = err !== null
      resolve({ errors: lines.length > 0 ? lines.length : (failed ? 1 : 0), first: lines[0] ?? (failed ? err.message : null) })
    })
  })
}

/**
 * Removes what a service leaves in a repository (`.git/cms/`, `refs/cms/*`), so the next start is a
 * first start, as on a fresh clone.
 * @param dir the repository
 */
export async function forgetServiceState (dir: string): Promise<void> {
  await rm(path.join(dir, '.git', 'cms'), { recursive: true, force: true })
  const refs = (await runGit(dir, 'for-each-ref', '--format=%(refname)', 'refs/cms/')).split('\n').filter(r => r !== '')
  for (const ref of refs) await runGit(dir, 'update-ref', '-d', ref)
}
