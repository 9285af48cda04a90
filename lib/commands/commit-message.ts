/**
 * The git commit message of a publish (also of an interrupted one, finished): a summary line
 * naming the first entries, then every entry.
 */
export function commitMessage (published: Array<{ collection: string, id: string, deleted: boolean }>): string {
  if (published.length === 0) return 'Commit earlier git-cms changes\n\nWrites of an earlier publish or edit whose commit did not happen.\n'
  const names = published.map(p => `${p.collection}/${p.id}${p.deleted ? ' (deleted)' : ''}`)
  const head = `Publish ${published.length} ${published.length === 1 ? 'entry' : 'entries'}`
  const listed = names.slice(0, 50).map(n => `- ${n}`).join('\n')
  const more = names.length > 50 ? `\n- and ${names.length - 50} more` : ''
  return `${head}: ${names.slice(0, 3).join(', ')}${names.length > 3 ? ', ...' : ''}\n\n${listed}${more}\n`
}
