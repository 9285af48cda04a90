/** Storing an upload: its type decided by its bytes, its name `<slug>-<8 hex of sha256>.<ext>` under `YYYY/MM/`. */
import { createReadStream } from 'node:fs'
import { open, readFile, rename, rm, mkdir, stat } from 'node:fs/promises'
import { createHash } from 'node:crypto'
import path from 'node:path'
import { BadRequestError, UnsupportedMediaTypeError } from '../errors.js'
import { slugOf } from '../api-shapes.js'
import { assertCollectionName, assertEntryId } from '../storage/names.js'
import type { UploadType } from '../config.js'
import { assertRealInside } from '../storage/safe-path.js'
import { writeFileAtomic } from '../storage/atomic-write.js'
import { UPLOAD_TYPES } from '../storage/media-index.js'
import { requireCollection, requirePermission, type CommandContext } from './command-context.js'

/** Where an upload is stored and how its URL is made. */
export interface UploadTarget {
  /** Absolute folder: the uploads folder (files go under YYYY/MM/), or a page bundle's folder. */
  dir: string
  /** URL prefix (`/uploads`); empty for a page bundle, whose files are referenced relative to the page. */
  url: string
  /** Files go under YYYY/MM/ (not in a page bundle). */
  dated: boolean
  collection?: string
  id?: string
}

/**
 * Decides where an upload goes, before its body is read: an existing page bundle's own folder (the
 * URL then the bare file name), else the collection's `uploadsDir`/`uploadsUrl`, else the top-level
 * ones; 400 for bad names, 404 for an unknown collection.
 */
export async function resolveUploadTarget (ctx: CommandContext, query: { collection?: unknown, id?: unknown }): Promise<UploadTarget> {
  const { config, repoDir, content } = ctx.services
  const global: UploadTarget = { dir: path.join(repoDir, config.uploadsDir), url: config.uploadsUrl, dated: true }
  if (query.collection === undefined) {
    if (query.id !== undefined) throw new BadRequestError('An upload id needs its collection', { field: 'collection' })
    return global
  }
  const name = assertCollectionName(query.collection)
  const id = query.id === undefined ? undefined : assertEntryId(query.id)
  const collection = await requireCollection(ctx, name)
  const index = await content.index(name)
  index.checkFolder()
  if (id !== undefined) {
    index.checkId(id)
    // Only an existing entry's bundle: an upload never makes a bundle folder for an entry nobody created.
    if (collection.indexFile !== null && await index.get(id) !== null) {
      const file = index.fileOf(id)
      if (path.basename(file, path.extname(file)) === collection.indexFile && path.dirname(file) !== collection.dir) {
        return { dir: path.dirname(file), url: '', dated: false, collection: name, id }
      }
    }
  }
  const own = collection.uploads === null ? global : { dir: path.join(repoDir, collection.uploads.dir), url: collection.uploads.url, dated: true }
  return { ...own, collection: name, ...(id !== undefined ? { id } : {}) }
}

/**
 * Moves an uploaded temp file to its target under its content-derived name, and gives its URL.
 * @param input the temp file (removed or moved), the client's file name (for the slug only), and resolveUploadTarget's target
 */
export async function storeUpload (ctx: CommandContext, input: { tempFile: string, originalName: string, target: UploadTarget }): Promise<{ url: string }> {
  const { config, content } = ctx.services
  const where = input.target
  try {
    await requirePermission(ctx, 'upload', where.collection, where.id)
    const { fileTypeFromFile } = await import('file-type')
    const detected = await fileTypeFromFile(input.tempFile)
    const type = (Object.entries(UPLOAD_TYPES) as Array<[UploadType, { ext: string, mime: string }]>)
      .find(([name, t]) => config.uploads.types.includes(name) && t.mime === detected?.mime)
    if (type === undefined) {
      throw new UnsupportedMediaTypeError(`File type not allowed; allowed: ${config.uploads.types.join(', ')}`, { detected: detected?.mime ?? null })
    }
    const hash = await sha256File(input.tempFile)
    const now = new Date()
    const yyyy = String(now.getUTCFullYear())
    const mm = String(now.getUTCMonth() + 1).padStart(2, '0')
    const slug = slugOf(path.basename(input.originalName.replace(/\\/g, '/')).replace(/\.[^.]*$/, ''), 60)
    const name = `${slug === '' ? 'file' : slug}-${hash.slice(0, 8)}.${type[1].ext}`
    const dir = where.dated ? path.join(where.dir, yyyy, mm) : where.dir
    const target = path.join(dir, name)
    await assertRealInside(content.repoRealDir, target)
    if (await stat(target).catch(() => null) === null) {
      await mkdir(dir, { recursive: true })
      await syncFile(input.tempFile)
      await moveInto(input.tempFile, target)
      await ctx.services.committer.track([ctx.services.relativePath(target)])
    }
    await ctx.services.media.noteFile(target)
    if (!where.dated) return { url: name }
    return { url: `${where.url === '/' ? '' : where.url}/${yyyy}/${mm}/${name}` }
  } finally {
    await rm(input.tempFile, { force: true })
  }
}

async function sha256File (file: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

async function syncFile (file: string): Promise<void> {
  const handle = await open(file, 'r')
  try { await handle.sync() } finally { await handle.close() }
}

/** Renames the upload into place; across file systems, writes it there atomically. */
async function moveInto (from: string, to: string): Promise<void> {
  try {
    await rename(from, to)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err
    await writeFileAtomic(to, await readFile(from))
  }
}
