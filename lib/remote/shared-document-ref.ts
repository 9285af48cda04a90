/**
 * A document instances of one site share through the remote (revoked sessions, CONTRACT 17): one
 * file in one commit on its own ref under `refs/cms/`, merged at each sync into a signed commit
 * with both parents, so the push that follows is a fast-forward.
 */
import { commitSignedRecord, swapRef, type RemoteContext } from './remote-context.js'
import { isAncestor, resolveCommit } from './git-queries.js'

/** A document the owner can write out and merge another instance's version into. */
export interface SharedDocument {
  /** Its name under `refs/cms/` (and the file name in the commit, with `.json`). */
  name: string
  /** This instance's current text. */
  text: () => string
  /** Whether the text holds nothing worth sharing (no ref is made for it then). */
  empty: (text: string) => boolean
  /** Takes in another instance's text (the owner checks it and ignores what it refuses). */
  merge: (text: string) => Promise<unknown>
}

/**
 * Merges the remote's version into this instance's and records it on the local ref (compare-and-
 * swap); when the result is the remote's text the remote's commit is taken, so instances holding
 * the same revocations hold the same commit. Returns true when the local ref changed.
 */
export async function syncSharedDocument (ctx: RemoteContext, doc: SharedDocument, tips?: { ours: string | null, theirs: string | null }): Promise<boolean> {
  const ref = `refs/cms/${doc.name}`
  const file = `${doc.name}.json`
  const ours = tips !== undefined ? tips.ours : await resolveCommit(ctx.git, ref)
  const theirs = tips !== undefined ? tips.theirs : await resolveCommit(ctx.git, `${ctx.cmsTracking}${doc.name}`)
  const theirsNew = theirs !== null && theirs !== ours && (ours === null || !await isAncestor(ctx.git, theirs, ours))
  let theirText: string | null = null
  if (theirsNew) {
    theirText = await ctx.git.run(['cat-file', 'blob', `${theirs}:${file}`]).catch(() => null)
    if (theirText !== null) await doc.merge(theirText)
  }
  const text = doc.text()
  if (theirsNew && text === theirText) return await moveRef(ctx, ref, theirs, ours)
  const current = ours === null ? null : await ctx.git.run(['cat-file', 'blob', `${ours}:${file}`]).catch(() => null)
  if (!theirsNew && current === text) return false
  // Nothing to share yet, and nothing to take in: no ref.
  if (ours === null && theirs === null && doc.empty(text)) return false
  const blob = (await ctx.git.run(['hash-object', '-w', '--stdin'], { input: text })).trim()
  const tree = (await ctx.git.run(['mktree'], { input: `100644 blob ${blob}\t${file}\n` })).trim()
  const parents = [ours, theirsNew ? theirs : null].filter((p): p is string => p !== null)
  return await moveRef(ctx, ref, await commitSignedRecord(ctx, ref, `cms: ${doc.name}`, tree, parents), ours)
}

/** Sets the local ref from `ours` to `to` (compare-and-swap); false when it moved meanwhile. */
async function moveRef (ctx: RemoteContext, ref: string, to: string, ours: string | null): Promise<boolean> {
  const moved = await swapRef(ctx, ref, to, ours)
  if (!moved) ctx.log.info({ ref }, 'a shared refs/cms document moved meanwhile; the next sync merges it')
  return moved
}
