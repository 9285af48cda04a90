/**
 * JSON entry text (data files and Hugo's `{ ... }` frontmatter). Read with JSON.parse. Edits change
 * only the bytes of what changed, at the source ranges `jsonc-parser` reports: a changed value is
 * replaced in place (on one line when it was on one line), a new key goes last in its object with
 * the file's indentation, a removed key loses its own text and one comma.
 */
import { parseTree, findNodeAtLocation, type Node as JsonNode } from 'jsonc-parser'
import { isDeepStrictEqual } from 'node:util'
import { EntryParseError } from './parse-error.js'
import { diffData, eolOf, indentRest, isPlainObject, lineStart, splice, valueAt, type DataChange } from './data-diff.js'

/**
 * Parses JSON text.
 * @param text the JSON text
 * @returns the value; throws EntryParseError when it is not JSON
 */
export function parseJsonText (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (err) {
    throw new EntryParseError(((err as Error).message.split('\n')[0] ?? 'Invalid JSON').slice(0, 300))
  }
}

/**
 * Writes data as new JSON text: two-space indent and a final newline.
 * @param value the data
 * @returns JSON text
 */
export function renderJson (value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n'
}

/**
 * Changes a JSON text from `before` to `after`, touching only the bytes that changed.
 * @param text the current text
 * @param before the data it holds
 * @param after the data to write
 * @returns the new text (the same text when nothing changed)
 */
export function editJsonText (text: string, before: unknown, after: unknown): string {
  const changes = diffData(before, after)
  if (changes.length === 0) return text
  const unit = indentUnit(text)
  let current = text
  try {
    for (const change of changes) current = applyChange(current, change, after, unit)
    if (isDeepStrictEqual(JSON.parse(current), after)) return current
  } catch {}
  const trailing = /\s*$/.exec(text)?.[0] ?? '\n'
  return (JSON.stringify(after, null, unit) + trailing).replace(/\r?\n/g, eolOf(text))
}

/** The file's indentation unit (its first indented line's), two spaces when it has none. */
function indentUnit (text: string): string {
  const m = /\n([ \t]+)\S/.exec(text)
  if (m === null) return '  '
  return m[1]!.startsWith('\t') ? '\t' : m[1]!
}

function applyChange (text: string, change: DataChange, after: unknown, unit: string): string {
  let c: DataChange = change
  for (;;) {
    const edited = tryChange(text, c, unit)
    if (edited !== null) return edited
    if (c.path.length === 0) throw new Error('unplaceable')
    const parent = c.path.slice(0, -1)
    c = { op: 'set', path: parent, value: valueAt(after, parent) }
  }
}

function tryChange (text: string, change: DataChange, unit: string): string | null {
  const root = parseTree(text)
  if (root === undefined) return null
  const eol = eolOf(text)
  if (change.path.length === 0) {
    if (change.op !== 'set') return null
    return splice(text, root.offset, root.offset + root.length, render(change.value, text, root, unit, eol))
  }
  const node = findNodeAtLocation(root, change.path)
  if (change.op === 'set') {
    if (node === undefined) return null
    return splice(text, node.offset, node.offset + node.length, render(change.value, text, node, unit, eol))
  }
  if (change.op === 'delete') {
    const prop = node?.parent?.type === 'array' ? node : node?.parent
    if (prop === undefined || (prop.type !== 'property' && prop.parent?.type !== 'array') || prop.parent === undefined) return null
    const siblings = prop.parent.children ?? []
    const i = siblings.indexOf(prop)
    if (siblings.length < 2 || i === -1) return null
    if (i < siblings.length - 1) return splice(text, prop.offset, siblings[i + 1]!.offset, '')
    const prev = siblings[i - 1]!
    return splice(text, prev.offset + prev.length, prop.offset + prop.length, '')
  }
  const object = findNodeAtLocation(root, change.path.slice(0, -1))
  const props = object?.children ?? []
  const isList = object?.type === 'array'
  if ((object?.type !== 'object' && !isList) || props.length === 0) return null
  const last = props[props.length - 1]!
  const sample = text.slice(object.offset, object.offset + object.length)
  const key = isList ? '' : JSON.stringify(String(change.path[change.path.length - 1])) + (multiLineOrSpaced(sample) ? ': ' : ':')
  const lastLineStart = lineStart(text, last.offset)
  const multiLine = text.slice(object.offset, last.offset).includes('\n')
  if (!multiLine) {
    const comma = multiLineOrSpaced(sample) ? ', ' : ','
    return splice(text, last.offset + last.length, last.offset + last.length, `${comma}${key}${inline(change.value, sample)}`)
  }
  const indent = text.slice(lastLineStart, last.offset)
  if (indent.trim() !== '') return null
  const value = indentRest(JSON.stringify(change.value, null, unit), indent, eol)
  return splice(text, last.offset + last.length, last.offset + last.length, `,${eol}${indent}${key}${value}`)
}

/** A value's new text: on one line when the old one was, else indented like the old one's line. */
function render (value: unknown, text: string, old: JsonNode, unit: string, eol: string): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  const oldText = text.slice(old.offset, old.offset + old.length)
  if (!oldText.includes('\n')) return inline(value, oldText)
  const indent = /^[ \t]*/.exec(text.slice(lineStart(text, old.offset)))![0]
  return indentRest(JSON.stringify(value, null, unit), indent, eol)
}

/** Whether a JSON text puts spaces after its commas and colons (or has only one member). */
function multiLineOrSpaced (sample: string): boolean {
  return /[,:] /.test(sample) || sample.includes('\n') || !/[,:]/.test(sample)
}

/** JSON on one line, spaced like `sample` (`[1, 2]` or `[1,2]`). */
function inline (value: unknown, sample = ', '): string {
  const spaced = multiLineOrSpaced(sample)
  const comma = spaced ? ', ' : ','
  const colon = spaced ? ': ' : ':'
  const walk = (v: unknown): string => {
    if (Array.isArray(v)) return `[${v.map(walk).join(comma)}]`
    if (isPlainObject(v)) return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}${colon}${walk(x)}`).join(comma)}}`
    return JSON.stringify(v)
  }
  return walk(value)
}
