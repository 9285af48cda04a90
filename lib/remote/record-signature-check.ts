/**
 * The signature rule of `refs/cms/*` sync (storage/record-signature.ts): a fetched ref is adopted
 * only when its tip is a record of this site; a local tip that an earlier version left unsigned
 * (written here, so trusted) gets a signed commit on top, of the same tree, before it is pushed.
 */
import { commitSignedRecord, swapRef, type RemoteContext } from './remote-context.js'

/** Whether a commit is signed by this site as the tip of `refs/cms/<name>`. */
export async function isSiteRecord (ctx: RemoteContext, name: string, sha: string): Promise<boolean> {
  const text = await ctx.git.run(['cat-file', 'commit', sha]).catch(() => null)
  return text !== null && ctx.signer.verify(`refs/cms/${name}`, text)
}

/**
 * Makes a local tip signed: unchanged when it is, else a signed commit of the same tree on top.
 * @returns the (new) signed tip, or null when the ref moved meanwhile (the next sync retries)
 */
export async function signedLocalTip (ctx: RemoteContext, name: string, sha: string): Promise<string | null> {
  if (await isSiteRecord(ctx, name, sha)) return sha
  const ref = `refs/cms/${name}`
  const tree = (await ctx.git.run(['rev-parse', `${sha}^{tree}`])).trim()
  const sealed = await commitSignedRecord(ctx, ref, 'cms: signed by this version', tree, [sha])
  if (!await swapRef(ctx, ref, sealed, sha)) return null
  ctx.log.info({ ref }, 'signed a refs/cms record an earlier version wrote')
  return sealed
}
