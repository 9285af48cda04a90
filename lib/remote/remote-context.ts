/**
 * What every remote step works with (the git runner, remote and branch, state, entry locks, content
 * indexes, log), and the git questions and moves the steps share, one git process each.
 */
import type { Logger } from 'pino'
import { withLocks, type KeyedLock } from '../storage/keyed-lock.js'
import { isAncestor } from '../storage/git-search.js'
import type { ContentStore } from '../storage/content-store.js'
import type { GitRunner } from '../git-runner.js'
import type { SyncState } from './sync-state.js'
import type { RecordSigner } from '../storage/record-signature.js'

/** The parts one remote step needs, resolved once at start. */
export interface RemoteContext {
  git: GitRunner
  /** The work tree (storage's git questions run there). */
  repoDir: string
  /** `.git/cms`, where a history merge keeps its temporary index. */
  stateDir: string
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

/** The entry lock keys of paths (`entry:<collection>/<id>`) plus `publish`: git never races a write of them. */
function lockKeysOf (ctx: RemoteContext, paths: readonly string[]): string[] {
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

/**
 * The commit a ref or revision names.
 * @returns the full sha, or null when it does not exist
 */
export async function resolveCommit (git: GitRunner, rev: string): Promise<string | null> {
  try {
    const out = (await git.run(['rev-parse', '--verify', '--quiet', `${rev}^{commit}`])).trim()
    return /^[0-9a-f]{40}$/.test(out) ? out : null
  } catch {
    return null
  }
}

/** The paths that differ between two commits. */
export async function changedPaths (git: GitRunner, from: string, to: string): Promise<string[]> {
  const out = await git.run(['diff', '--name-only', '--no-renames', '-z', from, to, '--'])
  return out.split('\0').filter(p => p !== '')
}

/** The values of every ref under some prefixes (one git process). */
export async function listRefs (git: GitRunner, ...prefixes: string[]): Promise<Map<string, string>> {
  const out = await git.run(['for-each-ref', '--format=%(objectname) %(refname)', ...prefixes])
  const refs = new Map<string, string>()
  for (const line of out.split('\n')) {
    const m = /^([0-9a-f]{40}) (\S+)$/.exec(line.trim())
    if (m !== null) refs.set(m[2]!, m[1]!)
  }
  return refs
}

/**
 * git fetch of exactly one refspec: no tags, no submodules, no FETCH_HEAD, nothing pruned.
 * @param ctx the remote context
 * @param refspec `+<remote refs>:<local refs>`
 */
export async function fetchRefspec (ctx: RemoteContext, refspec: string): Promise<void> {
  await ctx.git.run(['fetch', '--quiet', '--no-tags', '--no-recurse-submodules', '--no-write-fetch-head', ctx.remote, refspec])
}

/**
 * Fetches the remote branch into its tracking ref; a tip that no longer contains the one fetched
 * before (a force push) is recorded as diverged.
 * @param ctx the remote context
 * @param local HEAD, for the record
 * @returns the fetched tip (null when the branch does not exist there), and whether it was rewritten
 */
export async function fetchUpstream (ctx: RemoteContext, local: string | null): Promise<{ upstream: string | null, rewritten: boolean }> {
  const previous = await resolveCommit(ctx.git, ctx.tracking)
  try {
    await fetchRefspec(ctx, `+refs/heads/${ctx.branch}:${ctx.tracking}`)
  } catch (err) {
    // An empty repository on the host (or a branch not created yet): the next push creates it.
    if (!/couldn't find remote ref/i.test((err as Error).message)) throw err
    return { upstream: null, rewritten: false }
  }
  const upstream = await resolveCommit(ctx.git, ctx.tracking)
  const rewritten = upstream !== null && previous !== null && previous !== upstream && !await isAncestor(ctx.repoDir, previous, upstream)
  if (rewritten) {
    await ctx.state.setDiverged({ upstream, previous, local, at: Date.now() })
    ctx.log.error({ upstream, previous, local }, 'the remote branch was rewritten (force push); not merged, not pushed')
  }
  return { upstream, rewritten }
}
