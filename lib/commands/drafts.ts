/** The editor's draft state (`GET /draft`) and discarding drafts (`DELETE /draft`), which never writes base storage. */
import { draftScope, type CommandContext } from './command-context.js'

/**
 * Reports the editor's drafts: their `<collection>/<id>` (the inline editor renders those afresh), whether
 * a policy lets them publish, and whether a failed rebuild or push waits for `retryRebuild`/`retryPush`.
 * @param ctx command context
 * @returns the draft status
 */
export async function draftStatus (ctx: CommandContext): Promise<Record<string, unknown>> {
  const { services, identity } = ctx
  const keys = await services.drafts.keys(identity.id)
  return {
    hasDrafts: keys.length > 0,
    count: keys.length,
    entries: keys.map(k => `${k.collection}/${k.id}`),
    retryRebuild: { available: await services.webhook.hasReceipt() },
    retryPush: { available: await services.remote.retryAvailable() },
    ...(services.auth.authorizer.active ? { canPublish: await services.auth.authorizer.can(identity, 'publish', {}) } : {})
  }
}

/**
 * Discards the editor's drafts, all or scoped to a collection or one entry.
 * @param ctx command context
 * @param query optional `collection` and `id`
 * @returns `{ ok, cleared: ['collection/id', ...] }`
 */
export async function discardDrafts (ctx: CommandContext, query: { collection?: string, id?: string }): Promise<{ ok: true, cleared: string[] }> {
  const { services, identity } = ctx
  const scope = await draftScope(ctx, query)
  return await services.locks.run(`drafts:${identity.id}`, async () => {
    const records = await services.drafts.list(identity.id, scope)
    const removed = await services.drafts.remove(identity.id, records.map(r => ({ collection: r.collection, id: r.id })))
    return { ok: true, cleared: removed }
  })
}
