/**
 * Makes a generator's rendering of a Markdown field editable where it is the author's text: paired
 * blocks (align.ts) get the source hint and `data-cms-aligned`; the others say on hover why they
 * cannot be edited. Only a block with a draft changes what the page shows.
 */
import { alignBlocks, alignmentKey, type SourceBlock } from './align.js'
import { pageBlocks, ownText } from './page-blocks.js'
import { applyTextChange } from './aligned-edit.js'

/** What hovering a block that cannot be edited says. */
export const NOT_EDITABLE = 'Not editable here: this part of the page comes from the site\'s template, a shortcode or a component, not from the text of the entry.'
const NOT_EDITABLE_KIND = 'Not editable here: edit this part (code, a table, raw HTML) in the Studio.'

/** How many of a wrapper's blocks were found in the source. */
export interface AlignmentResult {
  /** Blocks of the page (text blocks the alignment looked at). */
  blocks: number
  /** Blocks made editable. */
  editable: number
  /** How long the pairing took, in milliseconds. */
  ms: number
}

/** Pairs a wrapper's rendered blocks with the source blocks and marks them. */
export function markAligned (wrapper: HTMLElement, source: readonly SourceBlock[], showDrafts: boolean, skip: (el: Element) => boolean): AlignmentResult {
  const began = performance.now()
  const els = pageBlocks(wrapper, skip)
  const texts = els.map(el => ownText(el))
  const pairs = alignBlocks(els.map((el, k) => ({ tag: el.tagName.toLowerCase(), text: texts[k]! })), source)
  const ms = performance.now() - began
  let editable = 0
  els.forEach((el, k) => {
    const j = pairs[k]
    const block = j === null || j === undefined ? undefined : source[j]
    if (block?.editable === true) {
      el.dataset.cmsSrc = block.src
      el.dataset.cmsAligned = ''
      delete el.dataset.cmsLocked
      el.classList.remove('cms-fixed')
      editable++
      if (showDrafts && alignmentKey(texts[k]!) !== alignmentKey(block.text)) {
        applyTextChange(el, block.text)
        el.classList.add('cms-draft')
        el.dataset.cmsState = 'draft'
      }
      return
    }
    delete el.dataset.cmsSrc
    el.dataset.cmsLocked = block === undefined ? NOT_EDITABLE : NOT_EDITABLE_KIND
    el.classList.add('cms-fixed')
    if (!el.hasAttribute('title')) el.title = el.dataset.cmsLocked
  })
  return { blocks: els.length, editable, ms }
}
