/**
 * `delete_collection`: remove a dynamic collection with all its entries and history. Its revision
 * log stays, so a collection created again under the same name never reuses a revision. Only entry
 * files are removed: other files in its folder (notes, assets, files of another format) stay, and
 * a folder is removed only when that leaves it empty.
 */
import { rm, rmdir } from 'node:fs/promises'
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
    const entryFiles = (await index.all()).map(e => e.file)
    await removeEntryFiles(def.dir, entryFiles)
    const files = entryFiles.map(f => services.relativePath(f))
    const definition = path.join(services.repoDir, DYNAMIC_DIR, `${name}.json`)
    await rm(definition, { force: true })
    await services.committer.track([...files, services.relativePath(definition)])
    services.content.registry.setDynamic(name, null)
    services.content.dropIndex(name)
    return { revision: revision + 1 }
  })
}

/** Removes the entry files, then each folder they were in that is left empty, up to the collection's. */
async function removeEntryFiles (collectionDir: string, files: string[]): Promise<void> {
  const folders = new Set<string>()
  for (const file of files) {
    await rm(file, { force: true })
    for (let dir = path.dirname(file); dir === collectionDir || dir.startsWith(collectionDir + path.sep); dir = path.dirname(dir)) folders.add(dir)
  }
  folders.add(collectionDir)
  // Deepest first, so a parent is tried after its children.
  for (const dir of [...folders].sort((a, b) => b.length - a.length)) {
    try {
      await rmdir(dir)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOENT') throw err
    }
  }
}
