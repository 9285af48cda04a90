/**
 * Deleting a media library file (409 `media_in_use` while entries or drafts reference it, unless
 * `force`). References are found with `git grep -F`: the file's URL (a page-bundle file: its name).
 */
import path from 'node:path'
import { lstat, realpath, unlink } from 'node:fs/promises'
import type { Stats } from 'node:fs'
import { MediaInUseError, NotFoundError } from '../errors.js'
import { assertMediaPath } from '../storage/media-index.js'
import type { MediaFile, MediaReference } from '../api-shapes.js'
import { grepRefs, grepWorkingTree } from '../storage/git-search.js'
import { DRAFTS_REF_PREFIX } from '../storage/draft-store.js'
import { idOfTreeName, shardOf } from '../storage/ref-tree-store.js'
import { idOfPath } from '../storage/entry-paths.js'
import { assertRealInside, isInside, relativeSlashPath } from '../storage/safe-path.js'
import type { Collection } from '../storage/collection-registry.js'
import type { Services } from '../services.js'
import { requirePermission, type CommandContext } from './command-context.js'

/**
 * Deletes the library file at the `path` parameter `raw` (permission `delete` for the collection
 * whose folder or page bundle holds it; `force` deletes it even when entries still reference it).
 */
export async function deleteMedia (ctx: CommandContext, raw: unknown, opts: { force: boolean }): Promise<{ ok: true, deleted: string, references: MediaReference[] }> {
  const { services } = ctx
  const file = await requireMediaFile(ctx, raw)
  await requirePermission(ctx, 'delete', file.entry?.collection ?? file.collection, file.entry?.id)
  const { references, otherDrafts } = await referencesOf(ctx, file)
  if ((references.length > 0 || otherDrafts > 0) && !opts.force) throw new MediaInUseError(file.path, references, otherDrafts)
  return await services.locks.run(`media:${file.path}`, async () => {
    // Checked again right before the unlink.
    const { abs } = await mediaFileOnDisk(services, file)
    await assertRealInside(services.content.repoRealDir, abs)
    await unlink(abs)
    services.media.forget(file.path)
    await services.committer.track([file.path])
    return { ok: true as const, deleted: file.path, references }
  })
}

/** The library file at the `path` parameter: 400 for a malformed path, 404 when the library has no such file. */
export async function requireMediaFile (ctx: CommandContext, raw: unknown): Promise<MediaFile> {
  const p = assertMediaPath(raw)
  const file = await ctx.services.media.get(p)
  if (file === undefined) throw new NotFoundError('No such file in the media library', { path: p })
  return file
}

/**
 * A library file as it is on disk now (404 unless still a plain file inside its media folder, never through a link).
 * @param services the instance
 * @param file the library file
 * @returns its absolute path and stats
 */
export async function mediaFileOnDisk (services: Services, file: MediaFile): Promise<{ abs: string, st: Stats }> {
  const abs = path.join(services.repoDir, ...file.path.split('/'))
  const root = services.media.rootOf(file.path)
  const st = await lstat(abs).catch(() => null)
  if (root === undefined || st === null || !st.isFile() || !isInside(await realpath(root.dir), await realpath(abs))) {
    if (st === null) services.media.forget(file.path)
    throw new NotFoundError('No such file in the media library', { path: file.path })
  }
  return { abs, st }
}

/** A library file's path and URL, and the entries (saved and drafted) that reference it, sorted. */
export async function findMediaReferences (ctx: CommandContext, raw: unknown): Promise<{ path: string, url: string, references: MediaReference[], otherDrafts: number }> {
  const file = await requireMediaFile(ctx, raw)
  const { references, otherDrafts } = await referencesOf(ctx, file)
  return { path: file.path, url: file.url, references, otherDrafts }
}

/** The saved entries and this editor's drafts that reference a library file, and how many (private) drafts of others do. */
async function referencesOf (ctx: CommandContext, file: MediaFile): Promise<{ references: MediaReference[], otherDrafts: number }> {
  const { repoDir, content } = ctx.services
  const collections = await content.registry.list()
  const found = new Map<string, MediaReference>()
  const others = new Set<string>()
  const add = (r: MediaReference): void => { found.set(JSON.stringify([r.collection, r.id, r.draft ?? false, r.editor ?? '', r.file ?? '']), r) }

  // A page-bundle file is referenced by its bare name, from its own page only.
  const bundle = file.entry
  const needle = bundle === undefined ? file.url : file.name
  const folders = bundle === undefined ? foldersOf(repoDir, collections) : [file.folder]
  for (const hit of await grepWorkingTree(repoDir, needle, folders)) {
    const entry = entryOfFile(repoDir, collections, hit)
    if (entry === null) continue
    if (bundle !== undefined && (entry.collection !== bundle.collection || entry.id !== bundle.id)) continue
    add({ ...entry, file: hit })
  }
  for (const hit of await grepRefs(repoDir, needle, DRAFTS_REF_PREFIX)) {
    const [collection, shard, name, ...rest] = hit.path.split('/')
    const id = name === undefined || rest.length > 0 ? null : idOfTreeName(name)
    if (collection === undefined || id === null || shard !== shardOf(id)) continue
    if (bundle !== undefined && (collection !== bundle.collection || id !== bundle.id)) continue
    const editor = hit.ref.slice(DRAFTS_REF_PREFIX.length)
    if (editor === ctx.identity.id) add({ collection, id, draft: true, editor })
    else others.add(JSON.stringify([editor, collection, id]))
  }
  const references = [...found.values()].sort((a, b) => a.collection.localeCompare(b.collection) || a.id.localeCompare(b.id) || Number(a.draft ?? false) - Number(b.draft ?? false))
  return { references, otherDrafts: others.size }
}

/** Every folder entries live in (a `files` collection: the folders of its files), without nesting. */
function foldersOf (repoDir: string, collections: readonly Collection[]): string[] {
  const rel = (abs: string): string => relativeSlashPath(repoDir, abs) || '.'
  const dirs = new Set<string>()
  for (const c of collections) {
    if (c.files !== null) for (const f of c.files.values()) dirs.add(rel(path.dirname(f)))
    else dirs.add(c.folder)
  }
  const sorted = [...dirs].sort((a, b) => a.length - b.length)
  return sorted.filter((d, i) => !sorted.slice(0, i).some(outer => outer === '.' || d.startsWith(outer + '/')))
}

/** The entry a repository file is, in the first collection that reads it. */
function entryOfFile (repoDir: string, collections: readonly Collection[], rel: string): { collection: string, id: string } | null {
  const abs = path.join(repoDir, ...rel.split('/'))
  for (const c of collections) {
    if (abs === c.dir || !isInside(c.dir, abs)) continue
    const id = idOfPath(c, path.relative(c.dir, abs))
    if (id !== null) return { collection: c.name, id }
  }
  return null
}
