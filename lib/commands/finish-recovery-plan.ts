/**
 * Writing the entry files of a publish (atomic replace or removal, a bounded number at a time, one
 * failure not stopping the others); committing, pushing and announcing a publish; and finishing a
 * publish that was interrupted: every file of the retained plan is put in place (idempotent), the
 * drafts it consumed are removed, the plan is cleared and the publish delivered. The latter runs at
 * start-up and before each publish.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import pLimit from 'p-limit'
import type { EntryData } from '../content/formats.js'
import { parseEntryText } from '../content/large-entry-text.js'
import type { CollectionIndex } from '../storage/collection-index.js'
import { writeFileAtomic, syncDirectory } from '../storage/atomic-write.js'
import { assertRealInside } from '../storage/safe-path.js'
import { removeEntryFile } from '../storage/entry-paths.js'
import type { Services } from '../services.js'
import type { CommitResult } from '../publish/git-committer.js'
import type { DeliveryFields, PublishedRef, RebuildOutcome } from '../api-shapes.js'

/** Finishes the retained recovery plan, if any; gives the `collection/id` keys it could not finish (`*`: an unreadable plan). */
export async function finishRecoveryPlan (services: Services): Promise<Set<string>> {
  const plan = await services.plans.read()
  if (plan === null) return new Set()
  if (plan === 'corrupt') {
    services.log.error('publish recovery plan is unreadable; leaving it in .git/cms/publish-plan.json for a person to inspect')
    return new Set(['*'])
  }
  const writes: BaseFileWrite[] = []
  const published: PublishedRef[] = []
  for (const item of plan.items) {
    const index = await services.content.index(item.collection)
    const file = path.join(services.repoDir, item.file)
    const data = item.text === null ? null : await parseEntryText(index.collection.format, item.text)
    // A file that already holds the planned content needs no write (and no new revision).
    const current = await readFile(file, 'utf8').catch(() => null)
    if (current === item.text) published.push({ collection: item.collection, id: item.id, revision: index.lastRevision(item.id), deleted: item.text === null })
    else writes.push({ index, id: item.id, file, text: item.text, data })
  }
  const results = await writeBaseFiles(services, writes)
  const failed = new Set<string>()
  for (const [i, r] of results.entries()) {
    const w = writes[i]!
    if ('error' in r) failed.add(`${w.index.collection.name}/${w.id}`)
    else published.push({ collection: w.index.collection.name, id: w.id, revision: r.revision, deleted: w.text === null })
  }
  if (failed.size > 0) return failed
  await services.drafts.remove(plan.editor.id, plan.items.map(i => ({ collection: i.collection, id: i.id })))
  await services.committer.track(plan.items.map(i => i.file))
  await services.plans.clear()
  // Finishing the publish is committing, pushing and announcing it as publish does, with the author of the interrupted one.
  const delivery: DeliveryFields = {}
  const { lost } = await deliverPublish(services, plan.editor, published, plan.items.map(i => i.file), delivery)
  if (lost) services.log.warn({ entries: plan.items.length }, 'an interrupted publish, finished, lost to another instance\'s push of the same files')
  else services.log.info({ entries: plan.items.length, ...delivery }, 'finished an interrupted publish')
  return new Set()
}

/** One entry file a publish writes. */
export interface BaseFileWrite {
  index: CollectionIndex
  id: string
  file: string
  /** The new content; null removes the file. */
  text: string | null
  data: EntryData | null
}

/** Files written at once. */
const CONCURRENCY = 16

/** Replaces or removes one file and records its revision. */
async function writeOne (w: BaseFileWrite): Promise<number> {
  if (w.text === null || w.data === null) {
    await removeEntryFile(w.index.collection.dir, w.file)
    return await w.index.recordDelete(w.id)
  }
  // The directories are synced once each, below, before any result is reported.
  await writeFileAtomic(w.file, w.text, { syncDirectory: false })
  return await w.index.recordWrite(w.id, w.data)
}

/** Writes each file and records its new revision; gives per write the revision or the error message. */
export async function writeBaseFiles (services: Services, writes: BaseFileWrite[]): Promise<Array<{ revision: number } | { error: string }>> {
  const limit = pLimit(CONCURRENCY)
  const results = await Promise.all(writes.map(async w => await limit(async () => {
    try {
      await assertRealInside(services.content.repoRealDir, w.file)
      return { revision: await w.index.serviceChange(w.id, async () => await writeOne(w)) }
    } catch (err) {
      services.log.error({ err, file: w.file }, 'publish write failed')
      return { error: 'The entry file could not be written' }
    }
  })))
  await Promise.all([...new Set(writes.map(w => path.dirname(w.file)))].map(syncDirectory))
  return results
}

/** Commits the files of a publish (also of an interrupted one, finished) as its editor. */
async function commitPublish (services: Services, editor: { id: string, name: string }, published: Array<{ collection: string, id: string, deleted: boolean }>, paths: string[]): Promise<CommitResult> {
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

/** Commits, pushes and announces a publish into `response`; `lost`: another instance's push of the same files won. */
export async function deliverPublish (services: Services, identity: { id: string, name: string }, published: PublishedRef[], writtenFiles: string[], response: DeliveryFields): Promise<{ lost: boolean }> {
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

/** Calls the rebuild webhook for a pushed (or local) commit and the entries it delivers. */
export async function announceRebuild (services: Services, commit: string | undefined, published: PublishedRef[]): Promise<RebuildOutcome> {
  return await services.webhook.send({ event: 'publish', ...(commit !== undefined ? { commit } : {}), published })
}

function mergePublished (earlier: PublishedRef[], now: PublishedRef[]): PublishedRef[] {
  const seen = new Set(now.map(p => `${p.collection}/${p.id}/${p.revision}`))
  return [...earlier.filter(p => !seen.has(`${p.collection}/${p.id}/${p.revision}`)), ...now]
}
