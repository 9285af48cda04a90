/**
 * `POST /mutate`: one command per request, dispatched through a table. The entry commands are change
 * functions that `changeEntry` runs under the entry's lock, the collection commands write the definitions
 * in `.cms/collections/`; the Markdown block edits have their own files.
 */
import { mkdir, readdir, rm, rmdir } from 'node:fs/promises'
import path from 'node:path'
import { BadRequestError, CmsError, ConflictError, ForbiddenError, LimitExceededError, NotFoundError, PayloadTooLargeError, RevisionConflictError, UnreadableEntryError } from '../errors.js'
import { parseFieldPath, setAtPath } from '../content/field-path.js'
import { assertRequestData, collectionCountOverLimit, MAX_DYNAMIC_COLLECTIONS, schemaOverLimit } from '../content/data-depth.js'
import { FORMAT_EXTENSIONS, isMarkdownFormat, type EntryData } from '../content/formats.js'
import { localeOfId, type LocaleLayout } from '../content/i18n-layout.js'
import type { CollectionIndex } from '../storage/collection-index.js'
import { assertCollectionName, assertEntryId } from '../storage/names.js'
import { writeFileAtomic } from '../storage/atomic-write.js'
import { assertRealInside } from '../storage/safe-path.js'
import { removeEntryFile } from '../storage/entry-paths.js'
import { DYNAMIC_DIR, type DynamicCollectionFile } from '../storage/collection-registry.js'
import type { MutateCommand, CommandType, MutateResult } from './command-schemas.js'
import { checkEntryScope, requireCollection, requireEntry, requirePermission, type CommandContext } from './command-context.js'
import { changeEntry, schemaValidator, type CurrentEntry } from './change-entry.js'
import { markdownBlock, markdownEdit } from './markdown-block.js'

type Handler<T extends CommandType> = (ctx: CommandContext, cmd: Extract<MutateCommand, { type: T }>) => Promise<MutateResult>

const HANDLERS: { [T in CommandType]: Handler<T> } = {
  // One field at a dot path (`a.b`); a Markdown body only whole, as a string.
  save_field: async (ctx, cmd) => {
    const segments = parseFieldPath(cmd.field)
    assertRequestData(cmd.value, 'value', segments.length)
    const { collection, id, def } = await requireEntry(ctx, cmd, 'edit')
    if (isMarkdownFormat(def.format) && segments[0] === 'body' && (segments.length > 1 || typeof cmd.value !== 'string')) {
      throw new BadRequestError('The Markdown body must be saved as a string', { field: 'value' })
    }
    return await changeEntry(ctx, {
      collection,
      id,
      expectedRevision: cmd.expectedRevision,
      target: 'follow',
      action: 'save',
      apply: (current) => ({ data: setAtPath(existingData(current, collection, id), segments, cmd.value) })
    })
  },

  // Creates an entry (a creatable collection; a singleton's only id) or replaces its full data; an
  // unreadable entry only with a matching expectedRevision.
  put_entry: async (ctx, cmd) => {
    assertRequestData(cmd.data)
    const { collection, id, def } = await requireEntry(ctx, cmd)
    if (isMarkdownFormat(def.format) && cmd.data.body !== undefined && typeof cmd.data.body !== 'string') {
      throw new BadRequestError('The Markdown body must be a string', { field: 'data.body' })
    }
    await requirePermission(ctx, 'edit', collection, id)
    return await changeEntry(ctx, {
      collection,
      id,
      expectedRevision: cmd.expectedRevision,
      target: 'follow',
      action: 'put',
      replacesUnreadable: true,
      apply: (current) => {
        if (!current.exists) {
          if (def.metadata.singletonId !== null && id !== def.metadata.singletonId) {
            throw new ForbiddenError(`Collection ${collection} is a singleton; its only entry is ${def.metadata.singletonId}`)
          }
          if (!def.metadata.creatable) throw new ForbiddenError(`Collection ${collection} does not allow new entries`)
          if (def.i18n !== null) assertLocaleId(def.i18n, id)
        }
        return { data: isMarkdownFormat(def.format) ? { ...cmd.data, body: cmd.data.body ?? '' } : cmd.data }
      }
    })
  },

  // Its history stays, so a restore brings it back.
  delete_entry: async (ctx, cmd) => {
    const { collection, id, def } = await requireEntry(ctx, cmd, 'delete')
    if (!def.metadata.deletable) throw new ForbiddenError(`Collection ${collection} does not allow deleting entries`)
    return await changeEntry(ctx, {
      collection,
      id,
      expectedRevision: cmd.expectedRevision,
      action: 'delete',
      replacesUnreadable: true,
      apply: (current) => {
        existingData(current, collection, id)
        return { data: null }
      }
    })
  },

  // The section composer's state, `data[layoutField]`.
  update_page_layout: async (ctx, cmd) => {
    assertRequestData(cmd.layout, 'layout', 1)
    const { collection, id, def } = await requireEntry(ctx, cmd, 'edit')
    return await changeEntry(ctx, {
      collection,
      id,
      expectedRevision: cmd.expectedRevision,
      action: 'save',
      apply: (current) => ({ data: { ...existingData(current, collection, id), [def.layoutField]: cmd.layout } })
    })
  },

  // Every id of the collection exactly once (400 otherwise; 403 when not orderable), `expectedRevision` the
  // collection's: each entry's 0-based position goes into its `orderField` (only changed ones, each snapshotted).
  reorder_entries: async (ctx, cmd) => {
    const collection = assertCollectionName(cmd.collection)
    const order = cmd.order.map(assertEntryId)
    const def = await requireCollection(ctx, collection)
    await checkEntryScope(ctx, collection, ...order)
    await requirePermission(ctx, 'edit', collection)
    if (!def.metadata.orderable) throw new ForbiddenError(`Collection ${collection} is not orderable`)
    const index = await ctx.services.content.index(collection)
    return await ctx.services.locks.run(`collection:${collection}`, async () => {
      const all = await index.all()
      const expected = cmd.expectedRevision ?? undefined
      if (expected !== undefined && expected !== index.revision) throw new RevisionConflictError(index.revision)
      const byId = new Map(all.map(e => [e.id, e]))
      const given = new Set(order)
      if (given.size !== order.length) throw new BadRequestError('order lists an id more than once', { field: 'order' })
      if (given.size !== byId.size || order.some(id => !byId.has(id))) {
        throw new BadRequestError('order must list every entry of the collection exactly once', { field: 'order' })
      }
      const unreadable = all.find(e => e.readError !== undefined)
      if (unreadable !== undefined) throw new UnreadableEntryError('An entry of the collection cannot be read', { id: unreadable.id })
      for (const [position, id] of order.entries()) {
        if (byId.get(id)?.fields?.[def.orderField] === position) continue
        await changeEntry(ctx, {
          collection,
          id,
          action: 'reorder',
          apply: (current) => {
            if (current.data === undefined) throw new UnreadableEntryError('An entry of the collection cannot be read', { id })
            if (current.data[def.orderField] === position) return { data: current.data }
            return { data: { ...current.data, [def.orderField]: position } }
          }
        })
      }
      return { revision: (await ctx.services.content.index(collection)).revision }
    })
  },

  md_block: markdownBlock,
  md_edit: markdownEdit,

  // Defines a dynamic collection in `.cms/collections/<name>.json`: 409 when a collection of that name
  // exists, 400 for a schema that does not compile, 413/422 over a limit (content/data-depth.ts).
  create_collection: async (ctx, cmd) => {
    const name = assertCollectionName(cmd.collection)
    assertSchemaBounds(cmd.schema)
    assertRequestData(cmd.schema, 'schema')
    await schemaValidator(ctx.services, cmd.schema)
    await requirePermission(ctx, 'manage_collections', name)
    const { services } = ctx
    // Creates take turns (not only per name), so two cannot both pass the count check.
    return await services.locks.run('create_collection', async () => await services.locks.run(`collection:${name}`, async () => {
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
      services.content.registry.definitionsChanged([services.relativePath(target)])
      services.content.dropIndex(name)
      const index = await services.content.index(name)
      await index.ready()
      return { revision: index.revision }
    }))
  },

  // Only a dynamic collection (others are 409): its entry files and history go, its revision log stays (revisions are
  // never reused); a refused one loses the files of its format at the top of its folder. Answers its revision plus one.
  delete_collection: async (ctx, cmd) => {
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
      const dir = def?.dir ?? path.join(services.content.registry.contentRoot, name)
      await assertRealInside(services.content.repoRealDir, dir)
      await services.history.removeCollection(name)
      const entryFiles = index !== null ? (await index.all()).map(e => e.file) : await filesWithExtensions(dir, refused ?? Object.values(FORMAT_EXTENSIONS).flat())
      await removeEntryFiles(dir, entryFiles)
      const files = entryFiles.map(f => services.relativePath(f))
      const definition = path.join(services.repoDir, DYNAMIC_DIR, `${name}.json`)
      await rm(definition, { force: true })
      await services.committer.track([...files, services.relativePath(definition)])
      services.content.registry.definitionsChanged([services.relativePath(definition)])
      services.content.dropIndex(name)
      return { revision: revision + 1 }
    })
  }
}

/**
 * Executes one validated command.
 * @param ctx command context
 * @param cmd the command
 * @returns the spec's success body (md_block adds the saved block's new `src`, md_edit also `block`)
 */
export async function mutate (ctx: CommandContext, cmd: MutateCommand): Promise<{ ok: true } & MutateResult> {
  const handler = HANDLERS[cmd.type] as Handler<CommandType>
  return { ok: true, ...await handler(ctx, cmd as never) }
}

/** The data of an entry the command needs to exist (404 otherwise). */
function existingData (current: CurrentEntry, collection: string, id: string): EntryData {
  if (!current.exists) throw new NotFoundError('Entry not found', { collection, id })
  return current.data ?? {}
}

/** A new entry of a multilingual collection goes where the layout puts one of its locales (400 otherwise; not `de/intro` beside `en`, `fr`). */
function assertLocaleId (layout: LocaleLayout, id: string): void {
  const where = localeOfId(layout, id)
  const first = id.split('/')[0] ?? ''
  const unknownLocaleFolder = layout.layout === 'folder' && id.includes('/') && /^[a-z]{2,3}([-_][A-Za-z]{2,4})?$/.test(first) && !layout.locales.includes(first)
  if (where === null || unknownLocaleFolder) {
    throw new BadRequestError(`Invalid entry id: it is in none of the locales of the collection (${layout.locales.join(', ')}); a translation's id is the one its layout gives it`, { field: 'id' })
  }
}

/** Refuses a schema over the depth (422) or size (413) limit, before anything compiles it. */
function assertSchemaBounds (schema: unknown): void {
  const over = schemaOverLimit(schema)
  if (over === null) return
  if (over.kind === 'depth') throw new LimitExceededError(over.message, { field: 'schema', limit: over.limit })
  throw new PayloadTooLargeError(over.message, { field: 'schema', limit: over.limit, length: over.length })
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
    await removeEntryFile(collectionDir, file)
  }
  try {
    await rmdir(collectionDir)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'ENOENT') throw err
  }
}
