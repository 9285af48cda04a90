/**
 * What every remote step works with: the git runner, the remote and branch names, the state, and
 * the instance parts a step must respect (entry locks, the content indexes, the log).
 */
import type { Logger } from 'pino'
import type { KeyedLock } from '../storage/keyed-lock.js'
import type { ContentStore } from '../storage/content-store.js'
import type { GitRunner } from './git-remote.js'
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
