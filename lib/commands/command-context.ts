/** What every command receives: the instance and the editor who asked. */
import { ForbiddenError, NotFoundError } from '../errors.js'
import type { Identity, AuthAction } from '../config.js'
import type { Services } from '../services.js'
import type { Collection } from '../storage/collection-registry.js'

/** The instance and the editor who asked. */
export interface CommandContext {
  services: Services
  identity: Identity
}

/** Refuses (403) unless the authorize policy allows the action (always allowed without a policy). */
export async function requirePermission (ctx: CommandContext, action: AuthAction, collection?: string, id?: string): Promise<void> {
  const allowed = await ctx.services.auth.authorizer.can(ctx.identity, action, { collection, id })
  if (!allowed) throw new ForbiddenError(`Not allowed: ${action}`, { action })
}

/**
 * Refuses (400) an id the collection cannot hold (`/` in a flat collection, a path through a
 * link leaving its folder) and a collection folder that leaves the repository, before any entry
 * file or ref is touched. A collection that does not exist (any more) is not checked: drafts of a
 * deleted collection can still be discarded.
 */
export async function checkEntryScope (ctx: CommandContext, collection: string, ...ids: Array<string | undefined>): Promise<void> {
  if (await ctx.services.content.registry.get(collection) === null) return
  const index = await ctx.services.content.index(collection)
  index.checkFolder()
  for (const id of ids) if (id !== undefined) index.checkId(id)
}

/** The collection of this name, or 404. */
export async function requireCollection (ctx: CommandContext, name: string): Promise<Collection> {
  const collection = await ctx.services.content.registry.get(name)
  if (collection === null) throw new NotFoundError('Collection not found', { collection: name })
  return collection
}
