/** `create_collection`: define a dynamic collection in `.cms/collections/<name>.json`. */
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { ConflictError, LimitExceededError, PayloadTooLargeError } from '../errors.js'
import { assertRequestData, collectionCountOverLimit, MAX_DYNAMIC_COLLECTIONS, schemaOverLimit } from '../content/data-depth.js'
import { assertCollectionName } from '../storage/names.js'
import { writeFileAtomic } from '../storage/atomic-write.js'
import { assertRealInside } from '../storage/safe-path.js'
import { DYNAMIC_DIR, type DynamicCollectionFile } from '../storage/collection-registry.js'
import type { CreateCollectionCommand } from './command-schemas.js'
import { requirePermission, type CommandContext } from './command-context.js'
import { schemaValidator } from './change-entry.js'

/**
 * Runs create_collection and gives the new collection's revision: 409 when a collection of that
 * name exists, 400 for a schema that does not compile, 413/422 over a limit (content/data-depth.ts).
 */
export async function createCollection (ctx: CommandContext, cmd: CreateCollectionCommand): Promise<{ revision: number }> {
  const name = assertCollectionName(cmd.collection)
  assertSchemaBounds(cmd.schema)
  assertRequestData(cmd.schema, 'schema')
  await schemaValidator(ctx.services, cmd.schema)
  await requirePermission(ctx, 'manage_collections', name)
  const { services } = ctx
  return await services.locks.run(`collection:${name}`, async () => {
    if (await services.content.registry.get(name) !== null) throw new ConflictError(`Collection ${name} already exists`, { collection: name })
    const full = collectionCountOverLimit((await services.content.registry.listDynamic()).length)
    if (full !== null) throw new LimitExceededError(full, { field: 'collection', limit: MAX_DYNAMIC_COLLECTIONS })
    const now = Date.now()
    const file: DynamicCollectionFile = { schema: cmd.schema, format: cmd.format ?? 'json', metadata: cmd.metadata ?? {}, created_at: now, updated_at: now }
    const target = path.join(services.repoDir, DYNAMIC_DIR, `${name}.json`)
    await assertRealInside(services.content.repoRealDir, target)
    const dir = path.join(services.content.registry.contentRoot, name)
    await assertRealInside(services.content.repoRealDir, dir)
    await writeFileAtomic(target, JSON.stringify(file, null, 2) + '\n')
    await mkdir(dir, { recursive: true })
    await services.committer.track([services.relativePath(target)])
    services.content.registry.setDynamic(name, file)
    services.content.dropIndex(name)
    const index = await services.content.index(name)
    await index.ready()
    return { revision: index.revision }
  })
}

/** Refuses a schema over the depth (422) or size (413) limit, before anything compiles it. */
function assertSchemaBounds (schema: unknown): void {
  const over = schemaOverLimit(schema)
  if (over === null) return
  if (over.kind === 'depth') throw new LimitExceededError(over.message, { field: 'schema', limit: over.limit })
  throw new PayloadTooLargeError(over.message, { field: 'schema', limit: over.limit, length: over.length })
}
