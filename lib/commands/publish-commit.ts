/** The git commit of a publish. */
import type { Services } from '../services.js'
import type { CommitResult } from '../publish/git-committer.js'

/**
 * Commits the files of a publish (also of an interrupted one, finished) as its editor; the message
 * is a summary line naming the first entries, then every entry.
 * @param services the instance (its committer)
 * @param editor who published
 * @param published the entries the publish wrote (none: earlier writes whose commit did not happen)
 * @param paths the repository paths to commit
 * @returns the commit, or why it failed
 */
export async function commitPublish (services: Services, editor: { id: string, name: string }, published: Array<{ collection: string, id: string, deleted: boolean }>, paths: string[]): Promise<CommitResult> {
  return await services.committer.commit({ paths, author: { name: editor.name, email: `${editor.id}@users.git-cms.invalid` }, message: commitMessage(published) })
}

function commitMessage (published: Array<{ collection: string, id: string, deleted: boolean }>): string {
  if (published.length === 0) return 'Commit earlier git-cms changes\n\nWrites of an earlier publish or edit whose commit did not happen.\n'
  const names = published.map(p => `${p.collection}/${p.id}${p.deleted ? ' (deleted)' : ''}`)
  const head = `Publish ${published.length} ${published.length === 1 ? 'entry' : 'entries'}`
  const listed = names.slice(0, 50).map(n => `- ${n}`).join('\n')
  const more = names.length > 50 ? `\n- and ${names.length - 50} more` : ''
  return `${head}: ${names.slice(0, 3).join(', ')}${names.length > 3 ? ', ...' : ''}\n\n${listed}${more}\n`
}
