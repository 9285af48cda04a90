/**
 * `POST /publish`: flush the editor's drafts in scope into base storage. Each entry ends in exactly
 * one of `published`, `conflicts` or `failed`; a conflicted or failed entry keeps its draft and is
 * not written at all. The written entries are protected by a recovery plan, recorded in history
 * (action `publish`), optionally committed to git and pushed (CONTRACT 6 and 13), and only then
 * announced to the rebuild webhook with the pushed commit. `{ retryPush: true }` pushes again what an
 * earlier push left here.
 */
import { readFile } from 'node:fs/promises'
import type { EntryData } from '../content/formats.js'
import { serializeEntryText } from '../content/large-entry-text.js'
import { mergeMarkdownDraft, isMarkdownDraft } from '../content/markdown/markdown-draft.js'
import type { DraftRecord } from '../storage/draft-store.js'
import type { CollectionIndex } from '../storage/collection-index.js'
import { formatOfFile } from '../storage/entry-paths.js'
import type { PlanItem } from '../publish/recovery-plan.js'
import type { ConflictCode, DeliveryFields, PublishReport } from '../api-shapes.js'
import { BadRequestError, ForbiddenError } from '../errors.js'
import type { PublishBody } from './command-schemas.js'
import { draftScope, type CommandContext } from './command-context.js'
import { withLocks } from '../storage/keyed-lock.js'
import { announceRebuild, deliverPublish, finishRecoveryPlan, writeBaseFiles, type BaseFileWrite } from './finish-recovery-plan.js'
import { checkIssues, replacedSnapshot } from './change-entry.js'
import type { Services } from '../services.js'
import type { Identity } from '../config.js'

/** An entry that passed every check and will be written. */
interface Ready extends BaseFileWrite {
  record: DraftRecord
  preimage: { data: EntryData, revision: number } | null
}

const CONFLICT_MESSAGES: Record<ConflictCode, string> = {
  stale_entry: 'The entry changed since this draft was made; reload it and reapply the change',
  legacy_draft: 'This draft was stored by another version and cannot be read',
  recovery_conflict: 'The entry belongs to an unfinished publish that could not be completed',
  stale_body: 'The Markdown source of this block changed since the draft was made',
  invalid_body: 'The stored Markdown draft is malformed'
}

/** Publishes the editor's drafts in scope: per-entry outcomes plus commit and rebuild results. */
export async function publish (ctx: CommandContext, body: PublishBody): Promise<PublishReport> {
  const { services, identity } = ctx
  if (body.retryRebuild === true) {
    return { ok: true, published: [], conflicts: [], failed: [], ...await services.webhook.retry() }
  }
  if (body.retryPush === true) return { ok: true, published: [], conflicts: [], failed: [], ...await retryPush(services, identity) }
  for (let attempt = 1; ; attempt++) {
    const { response, lost } = await publishDrafts(ctx, body)
    if (lost.length === 0) return response
    // Another instance pushed a change of the same files first: the drafts come back and run again.
    await services.drafts.put(identity.id, lost, { keepExisting: true })
    if (attempt === MAX_ATTEMPTS) {
      for (const r of lost) conflict(response, r, 'stale_entry')
      return { ...response, published: [] }
    }
  }
}

/** How often a publish that lost to another instance's push is run again (its drafts given back). */
const MAX_ATTEMPTS = 3

/** One run of a publish: the response, and the drafts it consumed when its commit lost to another instance's push. */
async function publishDrafts (ctx: CommandContext, body: PublishBody): Promise<{ response: PublishReport, lost: DraftRecord[] }> {
  const { services, identity } = ctx
  // Upstream changes first, so drafts made on an older base are caught as stale_entry.
  await services.remote.beforePublish()
  const scope = await draftScope(ctx, body)
  const response: PublishReport = { ok: true, published: [], conflicts: [], failed: [] }
  const entries = await services.drafts.list(identity.id, scope)
  const denied = new Set<string>()
  for (const entry of entries) {
    const target = { collection: entry.collection, id: entry.id }
    const allowed = await services.auth.authorizer.can(identity, 'publish', target) &&
      (('legacy' in entry) || entry.kind !== 'delete' || await services.auth.authorizer.can(identity, 'delete', target))
    if (!allowed) denied.add(`${entry.collection}/${entry.id}`)
  }
  // Refused as a whole when no entry in scope may be published; else the denied ones are `failed`.
  if (entries.length > 0 && denied.size === entries.length) throw new ForbiddenError('Not allowed: publish', { action: 'publish' })
  const unfinished = await finishRecoveryPlan(services)
  const keys = entries.flatMap(e => [`entry:${e.collection}/${e.id}`, `draft:${identity.id}:${e.collection}/${e.id}`])
  const writtenFiles: string[] = []
  const consumedRecords: DraftRecord[] = []

  await withLocks(services.locks, ['publish', ...keys], async () => {
    const ready: Ready[] = []
    for (const entry of entries) {
      if ('legacy' in entry) { conflict(response, entry, 'legacy_draft'); continue }
      if (unfinished.has('*') || unfinished.has(`${entry.collection}/${entry.id}`)) { conflict(response, entry, 'recovery_conflict'); continue }
      if (denied.has(`${entry.collection}/${entry.id}`)) { response.failed.push({ collection: entry.collection, id: entry.id, error: 'Not allowed: publish' }); continue }
      const prepared = await prepare(ctx, entry, response)
      if (prepared !== null) ready.push(prepared)
    }
    if (ready.length === 0) return

    const items: PlanItem[] = ready.map(r => ({ collection: r.record.collection, id: r.record.id, file: services.relativePath(r.file), text: r.text }))
    await services.plans.write({ version: 1, startedAt: Date.now(), editor: { id: identity.id, name: identity.name }, items })
    await services.history.append(ready.flatMap(r => r.preimage === null ? [] : [replacedSnapshot(r.record, r.preimage, 'publish', identity)]))
    const results = await writeBaseFiles(services, ready)
    for (const [i, result] of results.entries()) {
      const r = ready[i]!
      if ('error' in result) {
        response.failed.push({ collection: r.record.collection, id: r.record.id, error: result.error })
        continue
      }
      consumedRecords.push(r.record)
      writtenFiles.push(items[i]!.file)
      response.published.push({ collection: r.record.collection, id: r.record.id, revision: result.revision, deleted: r.text === null })
    }
    await services.drafts.remove(identity.id, consumedRecords)
    await services.plans.clear()
    await services.committer.track(items.map(i => i.file))
  })

  // Earlier writes whose commit did not happen are committed by the next publish, even an empty one.
  const commitPending = services.runtime.gitOnPublish && response.published.length === 0 && await services.committer.hasPending()
  if (response.published.length === 0 && !commitPending) return { response, lost: [] }
  const { lost } = await deliverPublish(services, identity, response.published, writtenFiles, response)
  return { response, lost: lost ? consumedRecords : [] }
}

async function prepare (ctx: CommandContext, record: DraftRecord, response: PublishReport): Promise<Ready | null> {
  const { services } = ctx
  let index: CollectionIndex | undefined
  let base: Awaited<ReturnType<CollectionIndex['get']>>
  let file: string
  try {
    index = await services.content.index(record.collection)
    base = await index.get(record.id)
    file = index.fileOf(record.id)
  } catch (err) {
    // The collection is gone, or no longer holds this id (its layout changed, its folder was refused).
    if (index !== undefined && !(err instanceof BadRequestError)) throw err
    conflict(response, record, 'stale_entry')
    return null
  }
  const baseRevision = base?.revision ?? index.lastRevision(record.id)
  let data: EntryData | null
  if (record.markdown !== undefined && record.fieldsEdited !== true && record.kind === 'put') {
    if (!isMarkdownDraft(record.markdown)) { conflict(response, record, 'invalid_body'); return null }
    if (base?.data === undefined || typeof base.data.body !== 'string') { conflict(response, record, 'stale_entry', baseRevision); return null }
    const merged = mergeMarkdownDraft(record.markdown, base.data.body)
    if ('stale' in merged) { conflict(response, record, 'stale_body', baseRevision); return null }
    data = { ...base.data, body: merged.body }
  } else {
    if (baseRevision !== record.baseRevision || base?.readError !== undefined) { conflict(response, record, 'stale_entry', baseRevision); return null }
    data = record.kind === 'delete' ? null : (record.data ?? {})
  }
  if (data !== null) {
    const { added } = await checkIssues(base?.data, services, index, data)
    if (added.length > 0) {
      response.failed.push({ collection: record.collection, id: record.id, error: 'Entry does not match collection schema', issues: added })
      return null
    }
  }
  let previousText: string | undefined
  if (base !== null && base.data !== undefined) {
    // The index's signature was checked against the file just now.
    try { previousText = await readFile(file, 'utf8') } catch {}
  }
  const text = data === null ? null : await serializeEntryText(formatOfFile(file, index.collection.format), data, previousText, { frontmatter: index.collection.frontmatter })
  const preimage = base?.data !== undefined ? { data: base.data, revision: base.revision } : null
  return { record, id: record.id, index, data, text, file, preimage }
}

function conflict (response: PublishReport, entry: { collection: string, id: string }, code: ConflictCode, currentRevision?: number): void {
  response.conflicts.push({
    collection: entry.collection,
    id: entry.id,
    code,
    message: CONFLICT_MESSAGES[code],
    ...(currentRevision !== undefined ? { currentRevision } : {})
  })
}

/** `{ retryPush: true }`: pushes the commits a failed push left here, then calls the webhook (`push` absent when nothing waited). */
async function retryPush (services: Services, identity: Identity): Promise<DeliveryFields & { retryPush: { available: boolean } }> {
  // Pushing published content to the site's host is part of publishing.
  if (services.auth.authorizer.active && !await services.auth.authorizer.can(identity, 'publish', {})) throw new ForbiddenError('Not allowed: publish')
  const { push, delivered } = await services.remote.retryPush()
  if (push === null) return { retryPush: { available: false }, rebuild: { triggered: false, ok: false } }
  if (!push.ok) return { push, retryPush: { available: true }, rebuild: { triggered: false, ok: false } }
  await services.deployment.recordPublished(push.commit)
  return { push, commit: push.commit, deploymentTracked: true, retryPush: { available: false }, ...await announceRebuild(services, push.commit, delivered) }
}
