/**
 * `md_block`: save one rendered Markdown block into the editor's private draft. (Wired to the
 * Markdown core and the draft store in the drafts work; until then it is refused as unavailable.)
 */
import { StorageUnavailableError } from '../errors.js'
import type { MdBlockCommand } from './command-schemas.js'
import type { CommandContext } from './command-context.js'

/**
 * Runs md_block.
 * @param ctx command context
 * @param cmd the validated command
 * @returns the draft's revision
 */
export async function markdownBlock (ctx: CommandContext, cmd: MdBlockCommand): Promise<{ revision: number }> {
  void ctx
  void cmd
  throw new StorageUnavailableError('Draft support is required for md_block')
}
