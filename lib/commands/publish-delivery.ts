/**
 * The end of a publish (CONTRACT 6 and 13): commit the written paths (with
 * `CMS_GIT_ON_PUBLISH=true`), push the commit, and only then call the rebuild webhook with the
 * pushed commit. Also `{ retryPush: true }`, which pushes again what an earlier push left here.
 */
import type { Services } from '../services.js'
import type { Identity } from '../config.js'
import type { RebuildOutcome } from '../publish/rebuild-webhook.js'
import type { CommitResult } from '../publish/git-committer.js'
import { ForbiddenError } from '../errors.js'
import type { PushOutcome } from '../remote/push-publish.js'
import type { PublishedRef } from '../remote/sync-state.js'

/** What this step adds to a publish response. */
export interface DeliveryFields extends Partial<RebuildOutcome> {
  commit?: string
  commitError?: string
  deploymentTracked?: boolean
  push?: PushOutcome
}

/**
 * Commits, pushes and announces what a publish wrote, completing `response` in place; `lost` when
 * another instance pushed a change of the same files first and this publish's commit was dropped.
 */
export async function deliverPublish (services: Services, identity: Identity, published: PublishedRef[], writtenFiles: string[], response: DeliveryFields): Promise<{ lost: boolean }> {
  let announce: PublishedRef[] = published
  if (services.runtime.gitOnPublish) {
    const { result, push, delivered, lost } = await services.remote.commitAndPush(published, writtenFiles, async () => await commitPublish(services, identity, published, writtenFiles))
    if (lost) return { lost }
    if ('commit' in result && result.commit !== null) {
      response.commit = result.commit
    } else if ('commitError' in result) {
      response.commitError = result.commitError
    }
    if (push !== null) {
      response.push = push
      // A replay onto a moved remote branch gives the publish a new commit: the pushed one.
      if (push.ok) response.commit = push.commit
      if (push.ok) announce = mergePublished(delivered, published)
    }
    if (response.commit !== undefined && (push === null || push.ok)) {
      await services.deployment.recordPublished(response.commit)
      response.deploymentTracked = true
    }
    if (push !== null && !push.ok) {
      // The host has not got the commit: a rebuild now would build the old content. The webhook
      // is called once the push succeeds (retryPush, the next publish, or the next start).
      response.rebuild = { triggered: false, ok: false }
      return { lost: false }
    }
  }
  Object.assign(response, await announceRebuild(services, response.commit, announce))
  return { lost: false }
}

/** `{ retryPush: true }`: pushes the commits a failed push left here, then calls the webhook (`push` absent when nothing waited). */
export async function retryPush (services: Services, identity: Identity): Promise<DeliveryFields & { retryPush: { available: boolean } }> {
  // Pushing published content to the site's host is part of publishing.
  if (services.auth.authorizer.active && !await services.auth.authorizer.can(identity, 'publish', {})) throw new ForbiddenError('Not allowed: publish')
  const { push, delivered } = await services.remote.retryPush()
  if (push === null) return { retryPush: { available: false }, rebuild: { triggered: false, ok: false } }
  if (!push.ok) return { push, retryPush: { available: true }, rebuild: { triggered: false, ok: false } }
  await services.deployment.recordPublished(push.commit)
  return { push, commit: push.commit, deploymentTracked: true, retryPush: { available: false }, ...await announceRebuild(services, push.commit, delivered) }
}

/** Calls the rebuild webhook for a pushed (or local) commit and the entries it delivers. */
async function announceRebuild (services: Services, commit: string | undefined, published: PublishedRef[]): Promise<RebuildOutcome> {
  if (!services.webhook.configured) return { rebuild: { triggered: false, ok: false } }
  return await services.webhook.send({ event: 'publish', ...(commit !== undefined ? { commit } : {}), published })
}

function mergePublished (earlier: PublishedRef[], now: PublishedRef[]): PublishedRef[] {
  const seen = new Set(now.map(p => `${p.collection}/${p.id}/${p.revision}`))
  return [...earlier.filter(p => !seen.has(`${p.collection}/${p.id}/${p.revision}`)), ...now]
}

/**
 * Commits the files of a publish (also of an interrupted one, finished) as its editor.
 * @param services the instance (its committer)
 * @param editor who published
 * @param published the entries the publish wrote (none: earlier writes whose commit did not happen)
 * @param paths the repository paths to commit
 * @returns the commit, or why it failed
 */
export async function commitPublish (services: Services, editor: { id: string, name: string }, published: Array<{ collection: string, id: string, deleted: boolean }>, paths: string[]): Promise<CommitResult> {
  return await services.committer.commit({ paths, author: { name: editor.name, email: `${editor.id}@users.git-cms.invalid` }, message: commitMessage(published) })
}

function commitMessage (published: Array<{ collection: string, id: string, deleted: boolean }>): string {
  if (published.length === 0) return 'Commit earlier git-cms changes\n\nWrites of an earlier publish or edit whose commit did not happen.\n'
  const names = published.map(p => `${p.collection}/${p.id}${p.deleted ? ' (deleted)' : ''}`)
  const head = `Publish ${published.length} ${published.length === 1 ? 'entry' : 'entries'}`
  const listed = names.slice(0, 50).map(n => `- ${n}`).join('\n')
  const more = names.length > 50 ? `\n- and ${names.length - 50} more` : ''
  return `${head}: ${names.slice(0, 3).join(', ')}${names.length > 3 ? ', ...' : ''}\n\n${listed}${more}\n`
}
