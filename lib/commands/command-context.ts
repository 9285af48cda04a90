/** What every command receives: the instance and the editor who asked. */
import { BadRequestError, ForbiddenError, NotFoundError } from '../errors.js'
import { assertCollectionName, assertEntryId } from '../storage/names.js'
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
 * Refuses (400) an id the collection cannot hold and a collection folder that leaves the repository,
 * before anything is touched; a deleted collection is not checked (its drafts can still be discarded).
 */
export async function checkEntryScope (ctx: CommandContext, collection: string, ...ids: Array<string | undefined>): Promise<void> {
  if (await ctx.services.content.registry.get(collection) === null) return
  const index = await ctx.services.content.index(collection)
  index.checkFolder()
  for (const id of ids) if (id !== undefined) index.checkId(id)
}

/** The drafts a discard or publish is scoped to: all, a collection's, or one entry's (400 for an id without its collection). */
export async function draftScope (ctx: CommandContext, query: { collection?: unknown, id?: unknown }): Promise<{ collection?: string, id?: string }> {
  if (query.id !== undefined && query.collection === undefined) throw new BadRequestError('id needs collection', { field: 'collection' })
  const scope = {
    ...(query.collection !== undefined ? { collection: assertCollectionName(query.collection) } : {}),
    ...(query.id !== undefined ? { id: assertEntryId(query.id) } : {})
  }
  if (scope.collection !== undefined) await checkEntryScope(ctx, scope.collection, scope.id)
  return scope
}

/** The collection of this name, or 404. */
export async function requireCollection (ctx: CommandContext, name: string): Promise<Collection> {
  const collection = await ctx.services.content.registry.get(name)
  if (collection === null) throw new NotFoundError('Collection not found', { collection: name })
  return collection
}

/**
 * The entry a command names: its collection name and id checked (400), its collection (404 without
 * one) and, given an action, the editor's permission for it (403).
 */
export async function requireEntry (ctx: CommandContext, names: { collection: unknown, id: unknown }, action?: AuthAction): Promise<{ collection: string, id: string, def: Collection }> {
  const collection = assertCollectionName(names.collection)
  const id = assertEntryId(names.id)
  const def = await requireCollection(ctx, collection)
  if (action !== undefined) await requirePermission(ctx, action, collection, id)
  return { collection, id, def }
}
