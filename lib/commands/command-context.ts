/**
 * What every command receives: the instance and the editor who asked.
 */
import { ForbiddenError } from '../errors.js'
import type { Identity, AuthAction } from '../config.js'
import type { Services } from '../services.js'
import type { Collection } from '../storage/collection-registry.js'
import { NotFoundError } from '../errors.js'

export interface CommandContext {
  services: Services
  identity: Identity
}

/**
 * Refuses unless the authorize policy allows the action (always allowed without a policy).
 * @param ctx command context
 * @param action the permission needed
 * @param collection collection concerned
 * @param id entry concerned
 */
export async function requirePermission (ctx: CommandContext, action: AuthAction, collection?: string, id?: string): Promise<void> {
  const allowed = await ctx.services.auth.authorizer.can(ctx.identity, action, { collection, id })
  if (!allowed) throw new ForbiddenError(`Not allowed: ${action}`, { action })
}

/**
 * Resolves a collection or 404.
 * @param ctx command context
 * @param name a valid collection name
 * @returns the collection
 */
export async function requireCollection (ctx: CommandContext, name: string): Promise<Collection> {
  const collection = await ctx.services.content.registry.get(name)
  if (collection === null) throw new NotFoundError('Collection not found', { collection: name })
  return collection
}
