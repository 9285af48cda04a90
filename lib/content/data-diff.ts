/** The changes at paths between an entry's old and new data, which the format-preserving editors apply to its text. */
import { isDeepStrictEqual } from 'node:util'

/** A path into data: object keys and array indexes. */
export type DataPath = Array<string | number>

/** One change: `set` replaces a value, `add` appends a key or an item, `delete` removes one (items last first). */
export type DataChange =
  | { op: 'set', path: DataPath, value: unknown }
  | { op: 'add', path: DataPath, value: unknown }
  | { op: 'delete', path: DataPath }

/**
 * The changes that turn `before` into `after`, in document order: objects and same-length arrays member by member,
 * appended or removed list items one by one, anything else whole, and whole too a value holding more changes than
 * 64 KiB of reparsing allows (at least 16): each change placed reparses the text (1,000 list items took 17 s).
 * @param textLength the length of the text the changes go into
 * @returns the changes
 */
export function diffData (before: unknown, after: unknown, textLength: number): DataChange[] {
  const out: DataChange[] = []
  walk(before, after, [], out, Math.max(16, Math.floor(64 * 1024 / Math.max(textLength, 1))))
  return out
}

function walk (before: unknown, after: unknown, path: DataPath, out: DataChange[], max: number): void {
  const start = out.length
  walkValue(before, after, path, out, max)
  if (out.length - start > max) out.splice(start, out.length - start, { op: 'set', path, value: after })
}

function walkValue (before: unknown, after: unknown, path: DataPath, out: DataChange[], max: number): void {
  if (Object.is(before, after)) return
  if (typeof before !== 'object' || before === null || typeof after !== 'object' || after === null) {
    out.push({ op: 'set', path, value: after })
    return
  }
  // Plain objects are compared member by member below; anything else whole first.
  const plain = isPlainObject(before) && isPlainObject(after)
  if (!plain && isDeepStrictEqual(before, after)) return
  if (plain && (Object.keys(after).length > 0 || Object.keys(before).length === 0)) {
    for (const key of Object.keys(before)) {
      if (!Object.hasOwn(after, key)) out.push({ op: 'delete', path: [...path, key] })
      else walk(before[key], after[key], [...path, key], out, max)
    }
    for (const key of Object.keys(after)) {
      if (!Object.hasOwn(before, key)) out.push({ op: 'add', path: [...path, key], value: after[key] })
    }
    return
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length > 0 && after.length > 0) {
    if (before.length === after.length) {
      for (let i = 0; i < after.length; i++) walk(before[i], after[i], [...path, i], out, max)
      return
    }
    if (after.length > before.length && before.every((v, i) => isDeepStrictEqual(v, after[i]))) {
      for (let i = before.length; i < after.length; i++) out.push({ op: 'add', path: [...path, i], value: after[i] })
      return
    }
    const removed = removedIndexes(before, after)
    if (removed !== null) {
      for (const i of removed.reverse()) out.push({ op: 'delete', path: [...path, i] })
      return
    }
  }
  out.push({ op: 'set', path, value: after })
}

/** The indexes of `before` whose removal leaves `after` (in order); null when `after` is not such a subsequence. */
function removedIndexes (before: unknown[], after: unknown[]): number[] | null {
  const removed: number[] = []
  let j = 0
  for (let i = 0; i < before.length; i++) {
    if (j < after.length && isDeepStrictEqual(before[i], after[j])) j++
    else removed.push(i)
  }
  return j === after.length ? removed : null
}

/** Whether a value is a plain object (not an array, not null). */
export function isPlainObject (v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}

/**
 * Edits a text from `before` to `after` with `place`, change by change; `place` answers null when it cannot
 * place a change minimally: then the nearest enclosing value (at least `minDepth` keys deep) is replaced whole instead.
 * @param read parses an edited text, to check it is `after`
 * @returns the edited text, or null when a change cannot be placed at all or the result does not read as `after`
 */
export function placeChanges (text: string, before: unknown, after: unknown, minDepth: number, place: (text: string, change: DataChange) => string | null, read: (text: string) => unknown): string | null {
  let current = text
  for (let change of diffData(before, after, text.length)) {
    let edited = place(current, change)
    while (edited === null) {
      if (change.path.length <= minDepth) return null
      const parent = change.path.slice(0, -1)
      const value = parent.reduce<unknown>((v, key) => v === null || typeof v !== 'object' ? undefined : (v as Record<string | number, unknown>)[key], after)
      change = { op: 'set', path: parent, value }
      edited = place(current, change)
    }
    current = edited
  }
  return isDeepStrictEqual(read(current), after) ? current : null
}

/** The text with `start..end` replaced. */
export function splice (text: string, start: number, end: number, replacement: string): string {
  return text.slice(0, start) + replacement + text.slice(end)
}

/** The line ending a text uses (its first one): `\r\n`, or `\n` (also when it has none). */
export function eolOf (text: string): string {
  const i = text.indexOf('\n')
  return i > 0 && text[i - 1] === '\r' ? '\r\n' : '\n'
}

/** Removes item `index` of a one-line list (its items' ranges) and the separator after it (the last: before it);
 * null when it is the only item. */
export function deleteInlineItem (text: string, ranges: ReadonlyArray<readonly [number, number, ...number[]]>, index: number): string | null {
  const item = ranges[index]
  if (item === undefined || ranges.length < 2) return null
  const next = ranges[index + 1]
  if (next !== undefined) return splice(text, item[0], next[0], '')
  return splice(text, ranges[index - 1]![1], item[1], '')
}

/** Inserts `line` (ending in `eol`) at a line's start, or at the end after a line ending when the last line has none. */
export function insertLine (text: string, at: number, line: string, eol: string): string {
  if (at === text.length && text !== '' && !text.endsWith('\n')) return text + eol + line
  return splice(text, at, at, line)
}

/**
 * Removes the whole lines from `start` to `end` (only spaces before; spaces or a `#` comment after).
 * @returns the text without them, or null when the lines hold more
 */
export function removeLines (text: string, start: number, end: number): string | null {
  const from = lineStart(text, start)
  if (text.slice(from, start).trim() !== '') return null
  const to = nextLineStart(text, end)
  if (text.slice(end, to).trim() !== '' && !text.slice(end, to).trim().startsWith('#')) return null
  return splice(text, from, to, '')
}

/** The offset where the line holding `offset` starts. */
export function lineStart (text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1
}

/** The offset just after the line ending of the line holding `offset` (the text's end on the last line). */
export function nextLineStart (text: string, offset: number): number {
  const i = text.indexOf('\n', offset)
  return i === -1 ? text.length : i + 1
}

/** Indents every non-empty line after the first by `indent` and converts line endings. */
export function indentRest (rendered: string, indent: string, eol: string): string {
  return rendered.split('\n').map((line, i) => i === 0 || line === '' ? line : indent + line).join(eol)
}
