/**
 * Storing an uploaded file: its type decided by its bytes (never its name or the client's content
 * type), its name `<slug>-<8 hex of sha256>.<ext>` under `YYYY/MM/`, so the same bytes give the
 * same URL.
 */
import { createReadStream } from 'node:fs'
import { open, rename, rm, mkdir, stat, copyFile } from 'node:fs/promises'
import { createHash } from 'node:crypto'
import path from 'node:path'
import { UnsupportedMediaTypeError } from '../errors.js'
import type { UploadType } from '../config.js'
import { assertRealInside } from '../storage/safe-path.js'
import { requirePermission, type CommandContext } from './command-context.js'

/** The file extension and MIME type of each allowed upload type. */
export const UPLOAD_TYPES: Record<UploadType, { ext: string, mime: string }> = {
  png: { ext: 'png', mime: 'image/png' },
  jpeg: { ext: 'jpg', mime: 'image/jpeg' },
  gif: { ext: 'gif', mime: 'image/gif' },
  webp: { ext: 'webp', mime: 'image/webp' },
  avif: { ext: 'avif', mime: 'image/avif' },
  pdf: { ext: 'pdf', mime: 'application/pdf' }
}

export interface StoreUploadInput {
  /** A temporary file holding the uploaded bytes (removed or moved by this command). */
  tempFile: string
  /** The client's file name; used only for the slug. */
  originalName: string
  now?: Date
}

/**
 * Moves an uploaded temp file into `uploadsDir` under its content-derived name.
 * @param ctx command context
 * @param input the temp file and the client's name
 * @returns `{ url }` under `uploadsUrl`
 */
export async function storeUpload (ctx: CommandContext, input: StoreUploadInput): Promise<{ url: string }> {
  const { config, repoDir, content } = ctx.services
  try {
    await requirePermission(ctx, 'upload')
    const { fileTypeFromFile } = await import('file-type')
    const detected = await fileTypeFromFile(input.tempFile)
    const type = (Object.entries(UPLOAD_TYPES) as Array<[UploadType, { ext: string, mime: string }]>)
      .find(([name, t]) => config.uploads.types.includes(name) && t.mime === detected?.mime)
    if (type === undefined) {
      throw new UnsupportedMediaTypeError(`File type not allowed; allowed: ${config.uploads.types.join(', ')}`, { detected: detected?.mime ?? null })
    }
    const hash = await sha256File(input.tempFile)
    const now = input.now ?? new Date()
    const yyyy = String(now.getUTCFullYear())
    const mm = String(now.getUTCMonth() + 1).padStart(2, '0')
    const name = `${slugOf(input.originalName)}-${hash.slice(0, 8)}.${type[1].ext}`
    const dir = path.join(repoDir, config.uploadsDir, yyyy, mm)
    const target = path.join(dir, name)
    await assertRealInside(content.repoRealDir, target)
    if (!(await exists(target))) {
      await mkdir(dir, { recursive: true })
      await syncFile(input.tempFile)
      await moveInto(input.tempFile, target)
      await ctx.services.committer.track([ctx.services.relativePath(target)])
    }
    return { url: `${config.uploadsUrl}/${yyyy}/${mm}/${name}` }
  } finally {
    await rm(input.tempFile, { force: true })
  }
}

/**
 * A file-name slug: lowercase ASCII letters, digits and dashes, at most 60 characters.
 * @param originalName the client's file name
 * @returns the slug ("file" when nothing is left)
 */
export function slugOf (originalName: string): string {
  const base = path.basename(originalName.replace(/\\/g, '/')).replace(/\.[^.]*$/, '')
  const slug = base.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase()
    .replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60).replace(/-+$/, '')
  return slug === '' ? 'file' : slug
}

async function sha256File (file: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

async function exists (file: string): Promise<boolean> {
  try { await stat(file); return true } catch { return false }
}

async function syncFile (file: string): Promise<void> {
  const handle = await open(file, 'r')
  try { await handle.sync() } finally { await handle.close() }
}

async function moveInto (from: string, to: string): Promise<void> {
  try {
    await rename(from, to)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err
    const tmp = `${to}.cms-tmp`
    await copyFile(from, tmp)
    await rename(tmp, to)
  }
}
