/**
 * Keeps the `data-cms-src` hints of a Markdown wrapper valid after one of its blocks was saved.
 * The save changed the body's length inside that block's range: blocks before it keep their hint,
 * blocks after it move by the difference, and the saved block (and any block around it) gets a
 * new end and a new hash computed from the body as the server now has it (the editor's draft).
 */
import { parseHint, formatHint, sourceHash, type SourceHint } from './bindings.js'

/**
 * Rewrites the hints of every block in a wrapper after a block save.
 * @param wrapper the `[data-cms-md]` element
 * @param saved the saved block's hint as it was sent
 * @param before the body the save was applied to
 * @param after the body after the save
 * @returns the blocks whose hint could not be renewed (they must not be edited before a reload)
 */
export async function renewHints (wrapper: HTMLElement, saved: SourceHint, before: string, after: string): Promise<HTMLElement[]> {
  const delta = after.length - before.length
  const stale: HTMLElement[] = []
  for (const el of Array.from(wrapper.querySelectorAll<HTMLElement>('[data-cms-src]'))) {
    const hint = parseHint(el.dataset.cmsSrc)
    if (hint === null) continue
    if (hint.end <= saved.start) continue
    let next: SourceHint
    if (hint.start >= saved.end) {
      next = { start: hint.start + delta, end: hint.end + delta, hash: hint.hash }
      const check = await sourceHash(after.slice(next.start, next.end))
      if (check !== null && check !== hint.hash) { stale.push(el); continue }
    } else {
      // The saved block itself, or a block that contains it: same start, new end, new content.
      const hash = await sourceHash(after.slice(hint.start, hint.end + delta))
      if (hash === null || hint.start > saved.start) { stale.push(el); continue }
      next = { start: hint.start, end: hint.end + delta, hash }
    }
    el.dataset.cmsSrc = formatHint(next)
  }
  return stale
}
