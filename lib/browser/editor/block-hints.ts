/**
 * Keeps the `data-cms-src` hints of a Markdown wrapper valid after one of its blocks was saved.
 * md_block answers the saved block's hint in the draft body; a save changes nothing outside its
 * block, so the blocks after it move by the block's growth and keep their hash. When that answer is
 * missing, the server renders the field again (`GET /render`) and each block takes the hint of the
 * served block at its place. The browser computes no hash (Web Crypto exists only on https and
 * localhost pages); the server checks every hint it gets.
 */
import { parseHint, type SourceHint } from './bindings.js'

/**
 * The hinted blocks of a wrapper, in document order (hints never nest).
 * @param root a `[data-cms-md]` element
 * @returns its `[data-cms-src]` elements
 */
export function hintedBlocks (root: Element): HTMLElement[] {
  return Array.from(root.querySelectorAll<HTMLElement>('[data-cms-src]'))
}

/**
 * Gives the page's blocks the hints of the served rendering. A block whose element or text no
 * longer matches the served one at its place (the draft changed elsewhere, or the save split a
 * block) keeps no valid hint: it is returned, and the caller locks it. The blocks in `own` (the one
 * just saved, the one being edited) show what the editor typed, so only their element is compared.
 * @param wrapper the page's `[data-cms-md]` element
 * @param served the served wrapper (from `CmsApi.renderField`)
 * @param own blocks whose text may differ from the served text
 * @returns the blocks whose hint could not be renewed
 */
export function refreshHints (wrapper: HTMLElement, served: HTMLElement, own: ReadonlySet<Element>): HTMLElement[] {
  const page = hintedBlocks(wrapper)
  const fresh = hintedBlocks(served)
  if (page.length !== fresh.length) return page
  const stale: HTMLElement[] = []
  page.forEach((el, i) => {
    const next = fresh[i]!
    const fits = el.tagName === next.tagName && (own.has(el) || el.textContent === next.textContent)
    if (!fits) { stale.push(el); return }
    el.dataset.cmsSrc = next.dataset.cmsSrc ?? ''
  })
  return stale
}

/**
 * Applies md_block's answer: the saved block takes its new hint, the blocks after it move by its
 * growth (same hash: their text did not change), the blocks before it keep theirs.
 * @param wrapper the page's `[data-cms-md]` element
 * @param saved the saved block
 * @param sent the hint the save was sent with
 * @param answered the hint md_block answered for the block in the draft body
 * @returns false (nothing changed) when the answer does not continue the sent hint
 */
export function moveHints (wrapper: HTMLElement, saved: HTMLElement, sent: SourceHint, answered: string): boolean {
  const next = parseHint(answered)
  // A different start: the server moved a published-page hint onto the draft; this page's other
  // hints are in the published body's terms, so only a fresh rendering brings them together.
  if (next === null || next.start !== sent.start) return false
  const growth = (next.end - next.start) - (sent.end - sent.start)
  for (const el of hintedBlocks(wrapper)) {
    if (el === saved) continue
    const hint = parseHint(el.dataset.cmsSrc)
    if (hint === null || hint.start < sent.end) continue
    el.dataset.cmsSrc = `${hint.start + growth}:${hint.end + growth}:${hint.hash}`
  }
  saved.dataset.cmsSrc = answered
  return true
}
