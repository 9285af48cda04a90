/**
 * The draft record of Markdown block edits: replacements of `baseBody` ranges, merged at publish with
 * the base's line changes outside them (one inside an edited range makes the draft stale).
 */
import { diffLines } from 'diff'

/** One edit: `baseBody.slice(start, end)` replaced by `text`. */
export interface MarkdownEdit {
  start: number
  end: number
  text: string
}

/** Lines changed at most for a line diff (Myers' is O(N·D)); beyond it the changed middle is one change. */
const MAX_CHANGED_LINES = 500

/** The payload stored as DraftRecord.markdown. */
export interface MarkdownDraft {
  version: 1
  baseBody: string
  body: string
  edits: MarkdownEdit[]
}

/**
 * Structural validation of a stored draft (anything else is `invalid_body` at publish).
 * @param value the stored value
 * @returns true when it is a consistent MarkdownDraft
 */
export function isMarkdownDraft (value: unknown): value is MarkdownDraft {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const v = value as Record<string, unknown>
  if (v.version !== 1 || typeof v.baseBody !== 'string' || typeof v.body !== 'string' || !Array.isArray(v.edits)) return false
  let previousEnd = 0
  for (const edit of v.edits as unknown[]) {
    if (typeof edit !== 'object' || edit === null) return false
    const e = edit as Record<string, unknown>
    if (!Number.isSafeInteger(e.start) || !Number.isSafeInteger(e.end) || typeof e.text !== 'string') return false
    const start = e.start as number
    const end = e.end as number
    if (start < previousEnd || end < start || end > v.baseBody.length) return false
    previousEnd = end
  }
  return applyReplacements(v.baseBody, v.edits as MarkdownEdit[]) === v.body
}

/**
 * A new draft for a body with no block edits yet.
 * @param body the body the first edit is made against
 * @returns an empty draft
 */
export function emptyMarkdownDraft (body: string): MarkdownDraft {
  return { version: 1, baseBody: body, body, edits: [] }
}

/**
 * Records one more edit (`draft.body.slice(start, end)` changed); edits it overlaps or touches fold into it.
 * @param draft the draft so far
 * @param start start of the edited range in `draft.body`
 * @param end end of the edited range in `draft.body`
 * @param newBody the body after the edit
 * @returns the new draft
 */
export function recordMarkdownEdit (draft: MarkdownDraft, start: number, end: number, newBody: string): MarkdownDraft {
  const growth = newBody.length - draft.body.length
  let s = start
  let e = end
  let delta = 0 // growth of the edits seen so far
  let deltaBefore = 0 // growth of the edits wholly before the edited range
  let groupDelta = 0 // growth of the edits folded into this one
  const edits: MarkdownEdit[] = []
  for (const edit of draft.edits) {
    const d = edit.text.length - (edit.end - edit.start)
    const ds = edit.start + delta
    const de = ds + edit.text.length
    if (ds <= end && start <= de) {
      s = Math.min(s, ds)
      e = Math.max(e, de)
      groupDelta += d
    } else {
      edits.push(edit)
      if (de < start) deltaBefore += d
    }
    delta += d
  }
  const baseStart = s - deltaBefore
  const baseEnd = e - deltaBefore - groupDelta
  const text = newBody.slice(s, e + growth)
  // An edit that puts the base text back is no edit at all.
  if (text !== draft.baseBody.slice(baseStart, baseEnd)) edits.push({ start: baseStart, end: baseEnd, text })
  edits.sort((x, y) => x.start - y.start || x.end - y.end)
  return { version: 1, baseBody: draft.baseBody, body: newBody, edits }
}

/**
 * Where a range of the base body is in the draft body (a published page keeps sending base hints).
 * @param draft the draft
 * @param start start of the range in `draft.baseBody`
 * @param end end of the range in `draft.baseBody`
 * @returns the range in `draft.body`, or null when an edit overlaps or touches it
 */
export function mapBaseRange (draft: MarkdownDraft, start: number, end: number): { start: number, end: number } | null {
  let delta = 0
  for (const edit of draft.edits) {
    if (edit.start <= end && start <= edit.end) return null
    if (edit.end < start) delta += edit.text.length - (edit.end - edit.start)
  }
  return { start: start + delta, end: end + delta }
}

/**
 * Merges a draft onto the current base body.
 * @param draft the stored draft (validated)
 * @param currentBaseBody the base body now
 * @returns the body to publish, or stale when the base changed inside an edited range
 */
export function mergeMarkdownDraft (draft: MarkdownDraft, currentBaseBody: string): { body: string } | { stale: true } {
  if (currentBaseBody === draft.baseBody) return { body: draft.body }
  const hunks = lineChanges(draft.baseBody, currentBaseBody)
  for (const hunk of hunks) {
    for (const edit of draft.edits) {
      const overlaps = hunk.start === hunk.end
        ? edit.start < hunk.start && hunk.start < edit.end
        : hunk.start < edit.end && edit.start < hunk.end
      if (overlaps) return { stale: true }
    }
  }
  const all: MarkdownEdit[] = [...draft.edits, ...hunks].sort((a, b) => a.start - b.start || a.end - b.end)
  return { body: applyReplacements(draft.baseBody, all) }
}

/** The line changes from `a` to `b` as sorted, non-overlapping replacements of `a` (jsdiff's diffLines). */
function lineChanges (a: string, b: string): MarkdownEdit[] {
  const changes = diffLines(a, b, { maxEditLength: MAX_CHANGED_LINES })
  if (changes === undefined) {
    let head = 0
    while (head < a.length && head < b.length && a[head] === b[head]) head++
    let tail = 0
    while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++
    return [{ start: head, end: a.length - tail, text: b.slice(head, b.length - tail) }]
  }
  const out: MarkdownEdit[] = []
  let at = 0
  let open: MarkdownEdit | null = null
  for (const change of changes) {
    if (!change.added && !change.removed) {
      if (open !== null) out.push(open)
      open = null
      at += change.value.length
      continue
    }
    open ??= { start: at, end: at, text: '' }
    if (change.added) open.text += change.value
    else { at += change.value.length; open.end = at }
  }
  if (open !== null) out.push(open)
  return out
}

/** Applies sorted, non-overlapping replacements to `text`. */
function applyReplacements (text: string, replacements: readonly MarkdownEdit[]): string {
  let out = ''
  let at = 0
  for (const r of replacements) {
    out += text.slice(at, r.start) + r.text
    at = r.end
  }
  return out + text.slice(at)
}
