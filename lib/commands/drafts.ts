/** The editor's draft state (`GET /draft`) and discarding drafts (`DELETE /draft`), which never writes base storage. */
import { draftScope, type CommandContext } from './command-context.js'

export interface DraftStatus {
  hasDrafts: boolean
  count: number
  /** The entries the editor has drafts of, as `<collection>/<id>` (the inline editor renders those afresh). */
  entries: string[]
  canPublish?: boolean
  retryRebuild: { available: boolean }
  /** A publish commit whose push to the git remote failed, waiting for `{ retryPush: true }`. */
  retryPush: { available: boolean }
}

/**
 * Reports the editor's drafts.
 * @param ctx command context
 * @returns the draft status
 */
export async function draftStatus (ctx: CommandContext): Promise<DraftStatus> {
  const { services, identity } = ctx
  const keys = await services.drafts.keys(identity.id)
  const count = keys.length
  const entries = keys.map(k => `${k.collection}/${k.id}`)
  const status: DraftStatus = { hasDrafts: count > 0, count, entries, retryRebuild: { available: await services.webhook.hasReceipt() }, retryPush: { available: await services.remote.retryAvailable() } }
  if (services.auth.authorizer.active) status.canPublish = await services.auth.authorizer.can(identity, 'publish', {})
  return status
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
