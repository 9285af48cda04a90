/** `create_collection`: define a dynamic collection in `.cms/collections/<name>.json`. */
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { ConflictError } from '../errors.js'
import { assertRequestData } from '../content/data-depth.js'
import { assertCollectionName } from '../storage/names.js'
import { writeFileAtomic } from '../storage/atomic-write.js'
import { assertRealInside } from '../storage/safe-path.js'
import { DYNAMIC_DIR, type DynamicCollectionFile } from '../storage/collection-registry.js'
import type { CreateCollectionCommand } from './command-schemas.js'
import { requirePermission, type CommandContext } from './command-context.js'
import { assertCollectionRoom, assertSchemaBounds, schemaValidator } from './bounded-schema.js'

/**
 * Runs create_collection and gives the new collection's revision: 409 when a collection of that
 * name exists, 400 for a schema that does not compile, 413/422 over the limits of bounded-schema.ts.
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
    assertCollectionRoom((await services.content.registry.listDynamic()).length)
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
