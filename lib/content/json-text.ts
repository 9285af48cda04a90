/**
 * JSON entry text (data files and Hugo's `{ ... }` frontmatter). Read with JSON.parse. Edits are
 * jsonc-parser's `modify`, with only the new text formatted (in the file's indentation and line
 * endings; on one line inside a one-line object or list), so every other byte stays.
 */
import { createRequire } from 'node:module'
import type { FormattingOptions } from 'jsonc-parser'
import { isDeepStrictEqual } from 'node:util'
import { entryParseError } from './parse-error.js'
import { diffData, eolOf } from './data-diff.js'

const requireHere = createRequire(import.meta.url)

/**
 * Parses JSON text.
 * @returns the value; throws EntryParseError when it is not JSON
 */
export function parseJsonText (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (err) {
    throw entryParseError(err)
  }
}

/** Writes data as new JSON text: two-space indent and a final newline. */
export function renderJson (value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n'
}

/**
 * Changes a JSON text from `before` to `after`, touching only the bytes that changed.
 * @returns the new text (the same text when nothing changed)
 */
export function editJsonText (text: string, before: unknown, after: unknown): string {
  // Loaded on the first edit of a JSON text: a Markdown site never needs it.
  const { applyEdits, findNodeAtLocation, format, modify, parseTree } = requireHere('jsonc-parser') as typeof import('jsonc-parser')
  // A file written as JSON.stringify writes it (no space anywhere) stays in that style.
  const trailing = /\s*$/.exec(text)?.[0] ?? '\n'
  if (JSON.stringify(before) === text.slice(0, text.length - trailing.length)) return JSON.stringify(after) + trailing
  const unit = indentUnit(text)
  const formattingOptions: FormattingOptions = { insertSpaces: unit !== '\t', tabSize: unit === '\t' ? 1 : unit.length, eol: eolOf(text) }
  let current = text
  try {
    for (const change of diffData(before, after)) {
      const value = change.op === 'delete' ? undefined : change.value
      const isArrayInsertion = change.op === 'add' && typeof change.path[change.path.length - 1] === 'number'
      const parent = findNodeAtLocation(parseTree(current)!, change.path.slice(0, -1))
      const keepLines = parent !== undefined && !current.slice(parent.offset, parent.offset + parent.length).includes('\n')
      for (const edit of modify(current, change.path, value, { isArrayInsertion })) {
        current = applyEdits(current, [edit])
        // An insertion on its own lines also formats the space before it (an emptied object: `{` then the key).
        const lead = edit.length === 0 && edit.offset > 0 && !keepLines ? 1 : 0
        const range = { offset: edit.offset - lead, length: edit.content.length + lead }
        current = applyEdits(current, format(current, range, { ...formattingOptions, keepLines }))
      }
    }
    if (isDeepStrictEqual(JSON.parse(current), after)) return current
  } catch {}
  return (JSON.stringify(after, null, unit) + trailing).replace(/\r?\n/g, eolOf(text))
}

/** The file's indentation unit (its first indented line's), two spaces when it has none. */
function indentUnit (text: string): string {
  const m = /\n([ \t]+)\S/.exec(text)
  if (m === null) return '  '
  return m[1]!.startsWith('\t') ? '\t' : m[1]!
}
