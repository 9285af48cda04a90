/**
 * `delete_collection`: remove a dynamic collection's entry files and history (its revision log
 * stays, so revisions are never reused); a refused one loses the files of its format at the top of its folder.
 */
import { readdir, rm, rmdir } from 'node:fs/promises'
import path from 'node:path'
import { CmsError, ConflictError, RevisionConflictError } from '../errors.js'
import { FORMAT_EXTENSIONS } from '../content/formats.js'
import type { CollectionIndex } from '../storage/collection-index.js'
import { assertCollectionName } from '../storage/names.js'
import { assertRealInside } from '../storage/safe-path.js'
import { removeEmptyFolders } from '../storage/entry-paths.js'
import { DYNAMIC_DIR } from '../storage/collection-registry.js'
import type { DeleteCollectionCommand } from './command-schemas.js'
import { requireCollection, requirePermission, type CommandContext } from './command-context.js'

/** Runs delete_collection (only dynamic collections; others are 409) and gives the revision the collection had, plus one. */
export async function deleteCollection (ctx: CommandContext, cmd: DeleteCollectionCommand): Promise<{ revision: number }> {
  const name = assertCollectionName(cmd.collection)
  const { services } = ctx
  // A definition refused at load (it arrived through git) is deleted without reading its entries.
  const refused = await services.content.registry.refused(name)
  const def = refused === null ? await requireCollection(ctx, name) : null
  await requirePermission(ctx, 'manage_collections', name)
  if (def !== null && def.source !== 'dynamic') {
    throw new ConflictError(`Collection ${name} is ${def.source === 'explicit' ? 'defined in the config' : 'a directory without a definition'}; only collections created through the API can be deleted`)
  }
  return await services.locks.run(`collection:${name}`, async () => {
    let index: CollectionIndex | null = null
    if (def !== null) {
      index = await services.content.index(name)
      // A schema that does not compile (it arrived through git) leaves the index unreadable.
      try { await index.ready() } catch (err) {
        if (!(err instanceof CmsError && err.status === 422 && err.details.collection === name)) throw err
        index = null
      }
    }
    const revision = index?.revision ?? 0
    const expected = cmd.expectedRevision ?? undefined
    if (index !== null && expected !== undefined && expected !== revision) throw new RevisionConflictError(revision)
    const dir = def?.dir ?? refused?.dir ?? path.join(services.content.registry.contentRoot, name)
    await assertRealInside(services.content.repoRealDir, dir)
    await services.history.removeCollection(name)
    const entryFiles = index !== null ? (await index.all()).map(e => e.file) : await filesWithExtensions(dir, refused?.extensions ?? Object.values(FORMAT_EXTENSIONS).flat())
    await removeEntryFiles(dir, entryFiles)
    const files = entryFiles.map(f => services.relativePath(f))
    const definition = path.join(services.repoDir, DYNAMIC_DIR, `${name}.json`)
    await rm(definition, { force: true })
    await services.committer.track([...files, services.relativePath(definition)])
    services.content.registry.setDynamic(name, null)
    services.content.dropIndex(name)
    return { revision: revision + 1 }
  })
}

/** The files of a folder (not its subfolders) whose extension is one of these. */
async function filesWithExtensions (dir: string, extensions: string[]): Promise<string[]> {
  let names: string[] = []
  try { names = await readdir(dir) } catch {}
  return names.filter(n => !n.startsWith('.') && extensions.includes(path.extname(n).toLowerCase())).map(n => path.join(dir, n))
}

/** Removes the entry files, then each folder they leave empty, the collection's own included. */
async function removeEntryFiles (collectionDir: string, files: string[]): Promise<void> {
  for (const file of files) {
    await rm(file, { force: true })
    await removeEmptyFolders(collectionDir, path.dirname(file))
  }
  try {
    await rmdir(collectionDir)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOENT') throw err
  }
}
