/**
 * Deleting a file of the media library, like any direct write of the service: the next publish
 * commits the removal with `CMS_GIT_ON_PUBLISH=true`, else it stays an uncommitted change. A file
 * that entries (or drafts) still reference is refused with 409 `media_in_use`, unless `force`.
 */
import path from 'node:path'
import { lstat, realpath, unlink } from 'node:fs/promises'
import { MediaInUseError, NotFoundError, BadRequestError } from '../errors.js'
import { assertRealInside, isInside } from '../storage/safe-path.js'
import { referencesOf, requireMediaFile, type MediaReference } from './media-references.js'
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
  const root = services.media.rootOf(file.path)
  if (root === undefined) throw new NotFoundError('No such file in the media library', { path: file.path })
  const abs = path.join(services.repoDir, ...file.path.split('/'))
  return await services.locks.run(`media:${file.path}`, async () => {
    // Checked again right before the unlink: the file must still be a plain file (not a link
    // put there meanwhile) whose real location is inside its media folder and the repository.
    let st
    try { st = await lstat(abs) } catch {
      services.media.forget(file.path)
      throw new NotFoundError('No such file in the media library', { path: file.path })
    }
    if (!st.isFile()) throw new BadRequestError('Not a plain file', { path: file.path })
    await assertRealInside(services.content.repoRealDir, abs)
    const real = await realpath(abs)
    if (!isInside(await realpath(root.dir), real)) throw new BadRequestError('The file is not inside its media folder', { path: file.path })
    await unlink(abs)
    services.media.forget(file.path)
    await services.committer.track([file.path])
    return { ok: true as const, deleted: file.path, references }
  })
}
