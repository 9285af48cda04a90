/**
 * Test helper: the lines one text changed against another (common leading and trailing lines cut
 * off), to prove that an edit touched only the lines of what changed.
 */

/**
 * The lines that differ between two texts.
 * @param before the old text
 * @param after the new text
 * @returns the old lines replaced and the new lines in their place (line endings kept)
 */
export function changedLines (before: string, after: string): { removed: string[], added: string[] } {
  const a = before.split(/(?<=\n)/)
  const b = after.split(/(?<=\n)/)
  let start = 0
  while (start < a.length && start < b.length && a[start] === b[start]) start++
  let endA = a.length
  let endB = b.length
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) { endA--; endB-- }
  return { removed: a.slice(start, endA), added: b.slice(start, endB) }
}
