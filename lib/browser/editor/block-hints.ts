/**
 * Keeps a Markdown wrapper's `data-cms-src` hints valid after a block was saved: from md_block's
 * answer (later blocks shift by the growth), else from a fresh `GET /render`. The browser computes
 * no hash (Web Crypto needs https); the server checks every hint.
 */
import { parseHint, type SourceHint } from './bindings.js'

/** The hinted blocks of a wrapper, in document order (hints never nest). */
export function hintedBlocks (root: Element): HTMLElement[] {
  return Array.from(root.querySelectorAll<HTMLElement>('[data-cms-src]'))
}

/**
 * Gives the page's blocks the hints of the served rendering; returns the blocks that no longer
 * match theirs (the caller locks them). Blocks in `own` show what was typed: only their element
 * is compared.
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
 * Applies md_block's answer: the saved block takes its hint, later blocks shift by its growth;
 * false when the answer does not continue the sent hint.
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
