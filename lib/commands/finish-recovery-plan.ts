/**
 * Writing the entry files of a publish (atomic replace or removal, a bounded number at a time, one
 * failure not stopping the others), and finishing a publish that was interrupted: every file of
 * the retained plan is put in place (idempotent), the drafts it consumed are removed, and the plan
 * is cleared. The latter runs at start-up and before each publish.
 */
import { readFile, rm } from 'node:fs/promises'
import path from 'node:path'
import pLimit from 'p-limit'
import { parseEntry, type EntryData } from '../content/formats.js'
import type { CollectionIndex } from '../storage/collection-index.js'
import { writeFileAtomic, syncDirectory } from '../storage/atomic-write.js'
import { assertRealInside } from '../storage/safe-path.js'
import { removeEmptyFolders } from '../storage/entry-paths.js'
import type { Services } from '../services.js'
import { commitPublish } from './publish-delivery.js'

/** Finishes the retained recovery plan, if any; gives the `collection/id` keys it could not finish (`*`: an unreadable plan). */
export async function finishRecoveryPlan (services: Services): Promise<Set<string>> {
  const plan = await services.plans.read()
  if (plan === null) return new Set()
  if (plan === 'corrupt') {
    services.log.error('publish recovery plan is unreadable; leaving it in .git/cms/publish-plan.json for a person to inspect')
    return new Set(['*'])
  }
  const writes: BaseFileWrite[] = []
  for (const item of plan.items) {
    const index = await services.content.index(item.collection)
    const file = path.join(services.repoDir, item.file)
    let data: EntryData | null = null
    if (item.text !== null) data = parseEntry(index.collection.format, item.text)
    // A file that already holds the planned content needs no write (and no new revision).
    const current = await readFile(file, 'utf8').catch(() => null)
    if (current === item.text) continue
    writes.push({ index, id: item.id, file, text: item.text, data })
  }
  const results = await writeBaseFiles(services, writes)
  const failed = new Set<string>()
  for (const [i, r] of results.entries()) if ('error' in r) failed.add(`${writes[i]!.index.collection.name}/${writes[i]!.id}`)
  if (failed.size > 0) return failed
  await services.drafts.remove(plan.editor.id, plan.items.map(i => ({ collection: i.collection, id: i.id })))
  await services.committer.track(plan.items.map(i => i.file))
  await services.plans.clear()
  // Finishing the publish includes its commit, with the author of the interrupted publish.
  if (services.runtime.gitOnPublish) {
    const entries = plan.items.map(i => ({ collection: i.collection, id: i.id, deleted: i.text === null }))
    const result = await commitPublish(services, plan.editor, entries, plan.items.map(i => i.file))
    if ('commitError' in result) services.log.warn({ commitError: result.commitError }, 'could not commit a finished publish; the next publish commits it')
    else if (result.commit !== null) await services.deployment.recordPublished(result.commit)
  }
  services.log.info({ entries: plan.items.length }, 'finished an interrupted publish')
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
    await rm(w.file, { force: true })
    await removeEmptyFolders(w.index.collection.dir, path.dirname(w.file))
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
