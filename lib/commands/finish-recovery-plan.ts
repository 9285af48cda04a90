/**
 * Finishing a publish that was interrupted: every file of the retained plan is put in place
 * (idempotent), the drafts it consumed are removed, and the plan is cleared. Runs at start-up and
 * before each publish.
 */
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { parseEntry, type EntryData } from '../content/formats.js'
import type { Services } from '../services.js'
import { writeBaseFiles, type BaseFileWrite } from './write-base-files.js'
import { commitPublish } from './publish-commit.js'

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
