/** `put_entry`: create an entry or replace its full data. */
import { BadRequestError, ForbiddenError } from '../errors.js'
import { assertRequestData } from '../content/data-depth.js'
import { isMarkdownFormat } from '../content/formats.js'
import type { PutEntryCommand } from './command-schemas.js'
import { changeEntry } from './change-entry.js'
import { localeOfId, type LocaleLayout } from '../content/i18n-layout.js'
import { requireEntry, requirePermission, type CommandContext } from './command-context.js'

/**
 * Runs put_entry. A new id needs a creatable collection (and, in a singleton collection, the
 * singleton's id); an unreadable entry is replaced only with a matching expectedRevision.
 * @param ctx command context
 * @param cmd the validated command
 * @returns the entry's new revision
 */
export async function putEntry (ctx: CommandContext, cmd: PutEntryCommand): Promise<{ revision: number }> {
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
