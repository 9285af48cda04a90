/** Inline formatting on DOM ranges (not `execCommand`, whose output differs between browsers). */

/**
 * The selection's range when it lies inside `root`.
 * @returns the range, or null
 */
export function rangeInside (root: HTMLElement): Range | null {
  const sel = window.getSelection()
  if (sel === null || sel.rangeCount === 0) return null
  const range = sel.getRangeAt(0)
  return root.contains(range.commonAncestorContainer) ? range : null
}

/** Makes `range` the selection. */
export function select (range: Range): void {
  const sel = window.getSelection()
  sel?.removeAllRanges()
  sel?.addRange(range)
}

function closestInside (node: Node, root: HTMLElement, tag: string): HTMLElement | null {
  for (let n: Node | null = node; n !== null && n !== root; n = n.parentNode) {
    if (n instanceof HTMLElement && n.tagName.toLowerCase() === tag) return n
  }
  return null
}

function unwrap (el: HTMLElement): void {
  const first = el.firstChild
  const last = el.lastChild
  el.replaceWith(...Array.from(el.childNodes))
  if (first !== null && last !== null) {
    const range = document.createRange()
    range.setStartBefore(first)
    range.setEndAfter(last)
    select(range)
  }
}

/**
 * Wraps the selection in an inline element (a link to `href`), or, when it lies in one already,
 * removes that element (a link takes the new `href` instead).
 * @returns true when something changed
 */
export function formatInline (root: HTMLElement, tag: 'strong' | 'em' | 'code' | 'a', href = ''): boolean {
  const range = rangeInside(root)
  if (range === null) return false
  const existing = closestInside(range.commonAncestorContainer, root, tag)
  if (existing !== null) {
    if (tag === 'a') existing.setAttribute('href', href)
    else unwrap(existing)
    return true
  }
  // With nothing selected a link shows its address; there is nothing to make bold.
  if (range.collapsed && tag !== 'a') return false
  const el = document.createElement(tag)
  if (tag === 'a') el.setAttribute('href', href)
  el.append(range.collapsed ? href : range.extractContents())
  // <strong>a <strong>b</strong></strong> says nothing more than <strong>a b</strong>.
  for (const inner of Array.from(el.querySelectorAll(tag))) inner.replaceWith(...Array.from(inner.childNodes))
  range.insertNode(el)
  const selected = document.createRange()
  selected.selectNodeContents(el)
  select(selected)
  return true
}

/** Inserts text (or a line break) at the selection, replacing what is selected. */
export function insertPlainText (root: HTMLElement, text: string, lineBreaks: boolean): void {
  const range = rangeInside(root)
  if (range === null) return
  range.deleteContents()
  const frag = document.createDocumentFragment()
  const lines = text.replace(/\r\n?/g, '\n').split('\n')
  lines.forEach((line, i) => {
    if (i > 0) frag.appendChild(lineBreaks ? document.createElement('br') : document.createTextNode(' '))
    if (line !== '') frag.appendChild(document.createTextNode(line))
  })
  const last = frag.lastChild
  range.insertNode(frag)
  if (last !== null) {
    range.setStartAfter(last)
    range.collapse(true)
    select(range)
  }
}
