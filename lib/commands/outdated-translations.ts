/**
 * Which translations of an entry are outdated (CONTRACT section 15): their source, the entry of
 * the collection's first locale, changed in a later commit than they did. "Changed" is a commit
 * on the site's branch (HEAD): a save not yet committed and an editor's draft count once they are
 * published into a commit; a file no commit touched is never outdated and outdates nothing.
 */
import type { CollectionIndex } from '../storage/collection-index.js'
import { isAncestor, lastCommitsOf } from '../storage/git-search.js'
import { relativeSlashPath } from '../storage/safe-path.js'

/**
 * The locales whose translation (of `translations`, locale -> id of each that exists) is older
 * than the source, in the layout's order; none without a source.
 */
export async function outdatedTranslations (repoDir: string, index: CollectionIndex, translations: Record<string, string>): Promise<string[]> {
  const sourceLocale = index.collection.i18n?.locales[0]
  const sourceId = sourceLocale === undefined ? undefined : translations[sourceLocale]
  if (sourceId === undefined) return []
  const paths = new Map<string, string>()
  for (const [locale, id] of Object.entries(translations)) {
    const file = index.pathOf(id)
    if (file !== null) paths.set(locale, relativeSlashPath(repoDir, file))
  }
  const source = paths.get(sourceLocale!)
  if (source === undefined) return []
  const last = await lastCommitsOf(repoDir, [...paths.values()])
  const sourceCommit = last.get(source)
  if (sourceCommit === undefined) return []
  const outdated: string[] = []
  for (const [locale, file] of paths) {
    const own = last.get(file)
    if (locale === sourceLocale || own === undefined || own.commit === sourceCommit.commit) continue
    // Later by commit time; commits of one second (scripts, tests) by ancestry.
    const later = sourceCommit.time !== own.time
      ? sourceCommit.time > own.time
      : await isAncestor(repoDir, own.commit, sourceCommit.commit)
    if (later) outdated.push(locale)
  }
  return outdated
}
