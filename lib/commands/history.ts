/** Reading an entry's history, and restoring it from a snapshot (the replaced state recorded as `restore`). */
import { NotFoundError } from '../errors.js'
import { isMarkdownFormat } from '../content/formats.js'
import type { Snapshot } from '../storage/history-store.js'
import type { RestoreBody } from './command-schemas.js'
import { changeEntry } from './change-entry.js'
import { checkEntryScope, requireEntry, requirePermission, type CommandContext } from './command-context.js'

/** An entry's snapshots, oldest first. */
export async function readHistory (ctx: CommandContext, query: { collection: unknown, id: unknown }): Promise<{ history: Snapshot[] }> {
  const { collection, id } = await requireEntry(ctx, query)
  await checkEntryScope(ctx, collection, id)
  const history = await ctx.services.history.list(collection, id)
  // Without a snapshot, an id that never named an entry (base, deleted, or the reader's draft) is 404.
  if (history.length === 0 && !(await entryEverExisted(ctx, collection, id))) throw new NotFoundError('Entry not found', { collection, id })
  return { history }
}

async function entryEverExisted (ctx: CommandContext, collection: string, id: string): Promise<boolean> {
  const index = await ctx.services.content.index(collection)
  if (await index.get(id) !== null || index.lastRevision(id) > 0) return true
  return await ctx.services.drafts.get(ctx.identity.id, collection, id) !== null
}

/** Restores an entry to a snapshot in base storage (edit and publish permissions under a policy). */
export async function restoreHistory (ctx: CommandContext, body: RestoreBody): Promise<{ ok: true, revision: number }> {
  const { collection, id, def } = await requireEntry(ctx, body)
  await checkEntryScope(ctx, collection, id)
  await requirePermission(ctx, 'edit', collection, id)
  await requirePermission(ctx, 'publish', collection, id)
  const snapshot = await ctx.services.history.find(collection, id, body.ts)
  if (snapshot === null) throw new NotFoundError('Snapshot not found', { collection, id, ts: body.ts })
  const restored = isMarkdownFormat(def.format) && typeof snapshot.bodySource === 'string'
    ? { ...snapshot.data, body: snapshot.bodySource }
    : snapshot.data
  const result = await changeEntry(ctx, {
    collection,
    id,
    action: 'restore',
    target: 'base',
    apply: () => ({ data: structuredClone(restored) })
  })
  return { ok: true, revision: result.revision }
}
