/**
 * Keeps the `data-cms-src` hints of a Markdown wrapper valid after one of its blocks was saved:
 * the server renders the field again from the editor's draft body (`GET /render`) and each block
 * of the page takes the hint of the served block at its place. The browser computes no hash (Web
 * Crypto exists only on https and localhost pages); the server checks every hint it gets.
 */

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
