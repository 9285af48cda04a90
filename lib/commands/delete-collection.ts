/**
 * `delete_collection`: remove a dynamic collection with all its entries and history. Its revision
 * log stays, so a collection created again under the same name never reuses a revision.
 */
import { rm } from 'node:fs/promises'
import path from 'node:path'
import { ConflictError, RevisionConflictError } from '../errors.js'
import { assertCollectionName } from '../storage/names.js'
import { assertRealInside } from '../storage/safe-path.js'
import { DYNAMIC_DIR } from '../storage/collection-registry.js'
import type { DeleteCollectionCommand } from './command-schemas.js'
import { requireCollection, requirePermission, type CommandContext } from './command-context.js'

/**
 * Runs delete_collection: only dynamic collections (explicit and inferred ones: 409).
 * @param ctx command context
 * @param cmd the validated command
 * @returns the revision the collection had when deleted, plus one
 */
export async function deleteCollection (ctx: CommandContext, cmd: DeleteCollectionCommand): Promise<{ revision: number }> {
  const name = assertCollectionName(cmd.collection)
  const def = await requireCollection(ctx, name)
  await requirePermission(ctx, 'manage_collections', name)
  if (def.source !== 'dynamic') {
    throw new ConflictError(`Collection ${name} is ${def.source === 'explicit' ? 'defined in the config' : 'a directory without a definition'}; only collections created through the API can be deleted`)
  }
  const { services } = ctx
  return await services.locks.run(`collection:${name}`, async () => {
    const index = await services.content.index(name)
    await index.ready()
    const revision = index.revision
    const expected = cmd.expectedRevision ?? undefined
    if (expected !== undefined && expected !== revision) throw new RevisionConflictError(revision)
    await assertRealInside(services.content.repoRealDir, def.dir)
    await services.history.removeCollection(name)
    const files = (await index.all()).map(e => services.relativePath(e.file))
    await rm(def.dir, { recursive: true, force: true })
    const definition = path.join(services.repoDir, DYNAMIC_DIR, `${name}.json`)
    await rm(definition, { force: true })
    await services.committer.track([...files, services.relativePath(definition)])
    services.content.registry.setDynamic(name, null)
    services.content.dropIndex(name)
    return { revision: revision + 1 }
  })
}
