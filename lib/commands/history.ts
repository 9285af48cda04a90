/**
 * Reading an entry's history, and restoring it from a snapshot (the replaced state is recorded
 * with action `restore`).
 */
import { NotFoundError } from '../errors.js'
import { assertCollectionName, assertEntryId } from '../storage/names.js'
import { isMarkdownFormat } from '../content/formats.js'
import type { Snapshot } from '../storage/history-store.js'
import type { RestoreBody } from './command-schemas.js'
import { changeEntry } from './change-entry.js'
import { checkEntryScope, requireCollection, requirePermission, type CommandContext } from './command-context.js'

/**
 * Lists an entry's snapshots, oldest first.
 * @param ctx command context
 * @param query collection and id
 * @returns `{ history }`
 */
export async function readHistory (ctx: CommandContext, query: { collection: unknown, id: unknown }): Promise<{ history: Snapshot[] }> {
  const collection = assertCollectionName(query.collection)
  const id = assertEntryId(query.id)
  await requireCollection(ctx, collection)
  await checkEntryScope(ctx, collection, id)
  return { history: await ctx.services.history.list(collection, id) }
}

/**
 * Restores an entry to a snapshot in base storage (edit and publish permissions under a policy).
 * @param ctx command context
 * @param body collection, id, ts
 * @returns the entry's new revision
 */
export async function restoreHistory (ctx: CommandContext, body: RestoreBody): Promise<{ ok: true, revision: number }> {
  const collection = assertCollectionName(body.collection)
  const id = assertEntryId(body.id)
  const def = await requireCollection(ctx, collection)
  await checkEntryScope(ctx, collection, id)
  await requirePermission(ctx, 'edit', collection, id)
  await requirePermission(ctx, 'publish', collection, id)
  const snapshot = await ctx.services.history.find(collection, id, body.ts)
  if (snapshot === null) throw new NotFoundError('Snapshot not found', { collection, id, ts: body.ts })
  const restored = isMarkdownFormat(def.format) && typeof snapshot.bodySource === 'string'
    ? { ...snapshot.data, body: snapshot.bodySource }
    : snapshot.data
  const result = await changeEntry(ctx.services, {
    collection,
    id,
    identity: ctx.identity,
    action: 'restore',
    target: 'base',
    apply: () => ({ data: structuredClone(restored) })
  })
  return { ok: true, revision: result.revision }
}
