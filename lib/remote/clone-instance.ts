/**
 * `git-cms serve --clone <url> --repo DIR`: an empty or missing DIR gets a clone of the site plus
 * the remote's `refs/cms/*` (history, drafts); a DIR already a clone is served as it is; anything
 * else is refused. The clone's `origin` is the instance's git remote unless the config names one.
 */
import { mkdir, readdir, rm, stat } from 'node:fs/promises'
import path from 'node:path'
import { StartupError } from '../errors.js'
import { GitRunner } from '../git-runner.js'
import { RecordSigner } from '../storage/record-signature.js'
import { isCmsRefName, isSiteRecord } from './cms-refs-sync.js'
import { listRefs } from './remote-context.js'
import type { Config } from '../config.js'

/**
 * Makes DIR a clone of the URL (with `refs/cms/*`) unless it already is a git repository.
 * @returns `cloned` when a clone was made, `existing` when DIR was already a repository
 */
export async function cloneInstance (url: string, dir: string, env: NodeJS.ProcessEnv = process.env): Promise<'cloned' | 'existing'> {
  const target = path.resolve(dir)
  const entries = await readdir(target).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null
    throw new StartupError(`--repo ${target} cannot be read: ${err.code ?? 'error'}`)
  })
  if (entries !== null && entries.length > 0) {
    if (await stat(path.join(target, '.git')).then(s => s.isDirectory(), () => false)) return 'existing'
    throw new StartupError(`--clone needs an empty or missing directory, and ${target} is neither (nor a git repository)`)
  }
  const parent = path.dirname(target)
  await mkdir(parent, { recursive: true })
  const git = new GitRunner({ baseDir: parent, env })
  git.rememberUrl(url)
  const created = entries === null
  try {
    await git.run(['clone', '--quiet', '--no-recurse-submodules', '--origin', 'origin', '--', url, target])
    const inRepo = new GitRunner({ baseDir: target, env })
    inRepo.rememberUrl(url)
    // History and drafts, as the remote's values last fetched: the first sync adopts those signed by
    // this site (cms-refs-sync.ts), never a record anyone with push access planted.
    await inRepo.run(['fetch', '--quiet', '--no-tags', 'origin', '+refs/cms/*:refs/cms-upstream/origin/*'])
    await adoptSignedRefs(inRepo, env)
  } catch (err) {
    // Leave nothing half-made: an empty directory stays empty, a missing one stays missing.
    if (created) await rm(target, { recursive: true, force: true }).catch(() => {})
    else for (const name of await readdir(target).catch(() => [])) await rm(path.join(target, name), { recursive: true, force: true }).catch(() => {})
    throw new StartupError(`could not clone the site: ${(err as Error).message.split('\n').slice(0, 3).join(' ')}`)
  }
  return 'cloned'
}

/** Adopts the fetched refs/cms tips this site signed, so a standby serves drafts and history from its first request. */
async function adoptSignedRefs (git: GitRunner, env: NodeJS.ProcessEnv): Promise<void> {
  const secret = env.CMS_SESSION_SECRET
  if (secret === undefined || secret === '') return
  const site = { git, signer: new RecordSigner(secret) }
  for (const [ref, sha] of await listRefs(git, 'refs/cms-upstream/origin/')) {
    const name = ref.slice('refs/cms-upstream/origin/'.length)
    if (isCmsRefName(name) && await isSiteRecord(site, name, sha)) await git.run(['update-ref', `refs/cms/${name}`, sha, ''])
  }
}

/**
 * The config with `git.remote` set to a default when the site's config names none (pushes of
 * publishes and of `refs/cms/*` then default to on, as with a configured remote).
 * @returns the config (the same object when nothing changes)
 */
export function withDefaultRemote (config: Config, remote: string | undefined): Config {
  if (remote === undefined || config.git.remote !== null) return config
  return Object.freeze({ ...config, git: Object.freeze({ ...config.git, remote, pushOnPublish: true, pushRefs: true }) })
}
