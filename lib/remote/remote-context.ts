/**
 * What every remote step works with: the git runner, the remote and branch names, the state, and
 * the instance parts a step must respect (entry locks, the content indexes, the log).
 */
import type { Logger } from 'pino'
import { withLocks, type KeyedLock } from '../storage/keyed-lock.js'
import type { ContentStore } from '../storage/content-store.js'
import type { GitRunner } from '../git-runner.js'
import type { SyncState } from './sync-state.js'
import type { RecordSigner } from '../storage/record-signature.js'

/** The parts one remote step needs, resolved once at start. */
export interface RemoteContext {
  git: GitRunner
  /** The remote's name (`origin`). */
  remote: string
  /** The remote branch publishes go to. */
  branch: string
  /** `refs/remotes/<remote>/<branch>`: the remote branch as last fetched. */
  tracking: string
  /** Where the remote's `refs/cms/*` are kept as last fetched: `refs/cms-upstream/<remote>/`. */
  cmsTracking: string
  state: SyncState
  log: Logger
  locks: KeyedLock
  content: ContentStore
  /** The content directory, repository-relative (entry lock keys are derived from its paths). */
  contentDir: string
  /** Checks that a fetched refs/cms tip is a record of this site, and signs local tips before a push. */
  signer: RecordSigner
}

/**
 * The entry lock keys of repository paths under the content directory (`entry:<collection>/<id>`),
 * plus `publish`, so git rewriting files never races a publish or a direct write of those entries.
 */
export function lockKeysOf (ctx: RemoteContext, paths: readonly string[]): string[] {
  const prefix = ctx.contentDir.replace(/\/+$/, '') + '/'
  const keys = ['publish']
  for (const p of paths) {
    if (!p.startsWith(prefix)) continue
    const parts = p.slice(prefix.length).split('/')
    if (parts.length !== 2) continue
    const file = parts[1]!
    const dot = file.lastIndexOf('.')
    keys.push(`entry:${parts[0]!}/${dot > 0 ? file.slice(0, dot) : file}`)
  }
  return keys
}

/**
 * Moves HEAD and the working tree with a git command that refuses to overwrite a local change
 * (`merge --ff-only`, `reset --keep`), under the entry locks of the paths it changes; whatever git
 * managed to write, the indexes look at those files again.
 */
export async function moveHead (ctx: RemoteContext, args: string[], paths: readonly string[]): Promise<void> {
  await withLocks(ctx.locks, lockKeysOf(ctx, paths), async () => {
    try {
      await ctx.git.run(args)
    } finally {
      ctx.content.markPathsChanged(paths)
    }
  })
}

/** A commit of `tree` on `parents` (committed as git-cms), signed as a record of this site on `ref`. */
export async function commitSignedRecord (ctx: RemoteContext, ref: string, summary: string, tree: string, parents: string[]): Promise<string> {
  const message = ctx.signer.sign(ref, summary, tree, parents.length === 0 ? null : parents)
  const env = { GIT_AUTHOR_NAME: 'git-cms', GIT_AUTHOR_EMAIL: 'git-cms@localhost', GIT_COMMITTER_NAME: 'git-cms', GIT_COMMITTER_EMAIL: 'git-cms@localhost' }
  return (await ctx.git.run(['commit-tree', tree, ...parents.flatMap(p => ['-p', p]), '-F', '-'], { input: message, env })).trim()
}

/** Moves a ref from `old` (null: absent) to `to` unless it moved meanwhile (compare-and-swap); false then. */
export async function swapRef (ctx: RemoteContext, ref: string, to: string, old: string | null): Promise<boolean> {
  return await ctx.git.run(['update-ref', ref, to, old ?? '0'.repeat(40)]).then(() => true, () => false)
}
