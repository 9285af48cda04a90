/**
 * TOML entry text (data files and `+++` frontmatter), read with smol-toml (dates as written); an
 * edit splices changed values into their source ranges and adds or removes only the keys' lines.
 */
import { createRequire } from 'node:module'
import { parseTOML, type AST } from 'toml-eslint-parser'
import { entryParseError } from './parse-error.js'
import { deleteInlineItem, eolOf, isPlainObject, insertLine, lineStart, nextLineStart, placeChanges, removeLines, splice, type DataChange, type DataPath } from './data-diff.js'

const requireHere = createRequire(import.meta.url)

/** The deepest nesting of inline arrays and tables read. */
const MAX_TOML_DEPTH = 100

/** smol-toml, loaded on the first TOML text: a site of YAML front matter never needs it. */
function smolToml (): typeof import('smol-toml') {
  return requireHere('smol-toml') as typeof import('smol-toml')
}

/** A TOML date, time or date-time as written (RFC 3339, with a space or `T`). */
const TOML_DATE = /^(\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:\d{2})?)?|\d{2}:\d{2}:\d{2}(\.\d+)?)$/

/**
 * Parses TOML text into plain data; dates are the text written.
 * @returns a table; throws EntryParseError when it cannot be read
 */
export function parseTomlText (text: string): Record<string, unknown> {
  let table: Record<string, unknown>
  try {
    table = smolToml().parse(text, { maxDepth: MAX_TOML_DEPTH }) as Record<string, unknown>
  } catch (err) {
    throw entryParseError(err)
  }
  let slots: Slots | null | undefined
  const rawDate = (p: DataPath): string | undefined => {
    if (slots === undefined) slots = slotsOf(text)
    const slot = slots?.values.get(pathKey(p))
    return slot === undefined ? undefined : text.slice(slot.node.range[0], slot.node.range[1])
  }
  return plainData(table, [], rawDate) as Record<string, unknown>
}

/** smol-toml's tables (null prototype) and dates as plain objects and the dates' text. */
function plainData (v: unknown, path: DataPath, rawDate: (p: DataPath) => string | undefined): unknown {
  if (v instanceof Date) return rawDate(path) ?? v.toISOString()
  if (Array.isArray(v)) return v.map((x, i) => plainData(x, [...path, i], rawDate))
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) {
      Object.defineProperty(out, k, { value: plainData(x, [...path, k], rawDate), enumerable: true, writable: true, configurable: true })
    }
    return out
  }
  return v
}

/**
 * Writes data as a new TOML text (new files, and the last resort of an edit). Strings that are
 * TOML dates are written as dates.
 */
export function renderToml (data: Record<string, unknown>): string {
  return smolToml().stringify(datesOf(data) as Record<string, unknown>).replace(/\n*$/, '\n')
}

/**
 * Changes a TOML text from `before` to `after`, touching only the bytes that changed.
 * @returns the new text (the same text when nothing changed)
 */
export function editTomlText (text: string, before: Record<string, unknown>, after: Record<string, unknown>): string {
  if (Object.keys(after).length === 0) return ''
  let edited: string | null = null
  try { edited = placeChanges(text, before, after, 1, tryChange, parseTomlText) } catch {}
  return edited ?? renderToml(after).replace(/\r?\n/g, eolOf(text))
}

interface Slot { path: DataPath, node: AST.TOMLContentNode, kv: AST.TOMLKeyValue | null, table: AST.TOMLTable | null }
interface Slots { values: Map<string, Slot>, kvs: Slot[], tables: AST.TOMLTable[] }

function pathKey (p: DataPath): string {
  return JSON.stringify(p)
}

/** Every value of a TOML text by path, its key-value lines and its tables; null when it cannot be parsed. */
function slotsOf (text: string): Slots | null {
  let program: AST.TOMLProgram
  try { program = parseTOML(text) } catch { return null }
  const slots: Slots = { values: new Map(), kvs: [], tables: [] }
  const addValue = (node: AST.TOMLContentNode, path: DataPath, kv: AST.TOMLKeyValue | null, table: AST.TOMLTable | null): void => {
    const slot = { path, node, kv, table }
    slots.values.set(pathKey(path), slot)
    if (kv !== null && kv.parent.type !== 'TOMLInlineTable') slots.kvs.push(slot)
    if (node.type === 'TOMLInlineTable') for (const inner of node.body) addKv(inner, path, table)
    if (node.type === 'TOMLArray') node.elements.forEach((e, i) => { addValue(e, [...path, i], null, table) })
  }
  const addKv = (kv: AST.TOMLKeyValue, prefix: DataPath, table: AST.TOMLTable | null): void => {
    addValue(kv.value, [...prefix, ...kv.key.keys.map(k => k.type === 'TOMLBare' ? k.name : k.value)], kv, table)
  }
  for (const item of program.body[0]?.body ?? []) {
    if (item.type === 'TOMLKeyValue') addKv(item, [], null)
    else {
      slots.tables.push(item)
      for (const kv of item.body) addKv(kv, item.resolvedKey, item)
    }
  }
  return slots
}

function tryChange (text: string, change: DataChange): string | null {
  const slots = slotsOf(text)
  if (slots === null) return null
  const eol = eolOf(text)
  const slot = slots.values.get(pathKey(change.path))
  const key = change.path[change.path.length - 1]
  if (typeof key === 'number' && change.op !== 'set') {
    const list = slots.values.get(pathKey(change.path.slice(0, -1)))
    if (list === undefined) {
      return change.op === 'add' ? addTableItem(text, slots, change.path, change.value, eol) : deleteTableItem(text, slots, change.path)
    }
    if (list.node.type !== 'TOMLArray') return null
    return change.op === 'add' ? addItem(text, list.node, change.value, eol) : deleteInlineItem(text, list.node.elements.map(e => e.range), key)
  }
  if (change.op === 'set' && change.value !== null) {
    if (slot === undefined) return null
    const rendered = renderValue(change.value, slot.node)
    return rendered === null ? null : splice(text, slot.node.range[0], slot.node.range[1], rendered)
  }
  if (change.op === 'delete' || change.op === 'set') {
    if (slot?.kv == null) return deleteTable(text, slots, change.path)
    // A dotted key reaching below this path holds more than it.
    if (slot.kv.parent.type === 'TOMLInlineTable' || slot.kv.value !== slot.node) return null
    return removeLines(text, slot.kv.range[0], slot.kv.range[1])
  }
  return addKey(text, slots, change.path, change.value, eol)
}

/** Removes the `[name]` table at a path (when nothing is nested below it). */
function deleteTable (text: string, slots: Slots, path: DataPath): string | null {
  const [table, ...below] = tablesUnder(slots, path)
  if (table === undefined || below.length > 0 || table.kind !== 'standard' || table.resolvedKey.length !== path.length) return null
  return splice(text, lineStart(text, table.range[0]), nextLineStart(text, table.range[1]), '')
}

function addKey (text: string, slots: Slots, path: DataPath, value: unknown, eol: string): string | null {
  if (value === null) return text
  const parent = path.slice(0, -1)
  const parentSlot = slots.values.get(pathKey(parent))
  if (parentSlot !== undefined) return null
  const rendered = renderValue(value, null)
  if (rendered === null) return null
  // The last key-value line within a table that holds the parent (by its header, or by dotted keys).
  const tablePath = (s: Slot): DataPath => s.table?.resolvedKey ?? []
  const holders = slots.kvs.filter(s => {
    const tp = tablePath(s)
    return tp.length <= parent.length && pathKey(s.path.slice(0, parent.length)) === pathKey(parent) &&
      pathKey(parent.slice(0, tp.length)) === pathKey(tp) && s.path.length > parent.length
  })
  let at: number
  let relative: DataPath
  let indent = ''
  const header = parent.length === 0 ? null : slots.tables.find(t => pathKey(t.resolvedKey) === pathKey(parent))
  if (holders.length > 0) {
    const last = holders[holders.length - 1]!
    relative = path.slice(tablePath(last).length)
    const kv = last.kv!
    at = nextLineStart(text, kv.range[1])
    indent = text.slice(lineStart(text, kv.range[0]), kv.range[0])
    if (indent.trim() !== '') return null
  } else if (header !== undefined && header !== null) {
    relative = [path[path.length - 1]!]
    at = nextLineStart(text, header.key.range[1])
  } else if (parent.length === 0) {
    relative = path
    const firstTable = slots.tables[0]
    at = firstTable === undefined ? text.length : lineStart(text, firstTable.range[0])
  } else {
    return null
  }
  const line = `${indent}${relative.map(k => renderKey(String(k))).join('.')} = ${rendered}${eol}`
  return insertLine(text, at, line, eol)
}

function addItem (text: string, list: AST.TOMLArray, value: unknown, eol: string): string | null {
  const last = list.elements[list.elements.length - 1]
  if (last === undefined) return null
  const rendered = renderValue(value, last)
  if (rendered === null) return null
  const indent = text.slice(lineStart(text, last.range[0]), last.range[0])
  const oneLine = !text.slice(list.range[0], last.range[0]).includes('\n') || indent.trim() !== ''
  if (oneLine) return splice(text, last.range[1], last.range[1], `, ${rendered}`)
  return splice(text, last.range[1], last.range[1], `,${eol}${indent}${rendered}`)
}

/** The `[[name]]` tables of an array of tables, in order (none when the path is not one). */
function arrayTables (slots: Slots, listPath: DataPath): AST.TOMLTable[] {
  return tablesUnder(slots, listPath).filter(t => t.kind === 'array' && t.resolvedKey.length === listPath.length + 1)
}

/** The tables at a path and below it, in order (an array's item: its `[[name]]` and its `[name.sub]` tables). */
function tablesUnder (slots: Slots, path: DataPath): AST.TOMLTable[] {
  const key = pathKey(path)
  return slots.tables.filter(t => t.resolvedKey.length >= path.length && pathKey(t.resolvedKey.slice(0, path.length)) === key)
}

/** Appends a `[[name]]` table after the array's last one. */
function addTableItem (text: string, slots: Slots, path: DataPath, value: unknown, eol: string): string | null {
  const listPath = path.slice(0, -1)
  const tables = arrayTables(slots, listPath)
  const last = tables[tables.length - 1]
  if (last === undefined || !isPlainObject(value)) return null
  const below = tablesUnder(slots, last.resolvedKey)
  const end = Math.max(...below.map(t => t.range[1]))
  const indent = last.body[0] === undefined ? '' : text.slice(lineStart(text, last.body[0].range[0]), last.body[0].range[0])
  if (indent.trim() !== '') return null
  const lines = [`[[${text.slice(last.key.range[0], last.key.range[1])}]]`]
  for (const [k, v] of Object.entries(value)) {
    if (v === null) continue
    const rendered = renderValue(v, null)
    if (rendered === null) return null
    lines.push(`${indent}${renderKey(k)} = ${rendered}`)
  }
  const gap = /\r?\n[ \t]*\r?\n[ \t]*\[\[/.test(text.slice(tables[0]!.range[0])) ? eol : ''
  const at = nextLineStart(text, end)
  const block = gap + lines.join(eol) + eol
  return insertLine(text, at, block, eol)
}

/** Removes one `[[name]]` table (when nothing is nested below it). */
function deleteTableItem (text: string, slots: Slots, path: DataPath): string | null {
  const tables = arrayTables(slots, path.slice(0, -1))
  const table = tables[path[path.length - 1] as number]
  if (table === undefined || tables.length < 2 || tablesUnder(slots, table.resolvedKey).length > 1) return null
  const from = lineStart(text, table.range[0])
  let to = nextLineStart(text, table.range[1])
  // The blank lines that separated it from the next table go with it.
  while (to < text.length && /^[ \t]*\r?\n/.test(text.slice(to, nextLineStart(text, to)))) to = nextLineStart(text, to)
  if (to >= text.length && from > 0) return splice(text, from, to, '').replace(/(\r?\n)[ \t]*\r?\n$/, '$1')
  return splice(text, from, to, '')
}

/** A key, bare when it can be. */
function renderKey (key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : basicString(key)
}

function basicString (s: string): string {
  // JSON escapes are TOML basic-string escapes; TOML also forbids a raw DEL.
  return JSON.stringify(s).replace(/\u007f/g, '\\u007F')
}

/** A value as inline TOML in the style of the one it replaces (literal, float, date); null when TOML cannot hold it. */
function renderValue (value: unknown, old: AST.TOMLContentNode | null): string | null {
  if (typeof value === 'string') {
    if (TOML_DATE.test(value) && (old === null || (old.type === 'TOMLValue' && old.kind !== 'string'))) return value
    if (old?.type === 'TOMLValue' && old.kind === 'string' && old.style === 'literal' && !old.multiline && !/['\u0000-\u001f\u007f]/.test(value)) return `'${value}'`
    return basicString(value)
  }
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'nan'
    if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf'
    if (Number.isInteger(value) && old?.type === 'TOMLValue' && old.kind === 'float') return `${value}.0`
    return String(value)
  }
  if (typeof value === 'boolean') return String(value)
  if (Array.isArray(value)) {
    const items = value.map(v => renderValue(v, null))
    return items.includes(null) ? null : `[${items.join(', ')}]`
  }
  if (isPlainObject(value)) {
    const entries = Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [renderKey(k), renderValue(v, null)])
    if (entries.some(([, r]) => r === null)) return null
    return entries.length === 0 ? '{}' : `{ ${entries.map(([k, r]) => `${k} = ${r!}`).join(', ')} }`
  }
  return null
}

/** A copy of data where strings that are TOML dates become TomlDate values. */
function datesOf (v: unknown): unknown {
  if (typeof v === 'string' && TOML_DATE.test(v)) {
    const d = new (smolToml().TomlDate)(v.replace(' ', 'T'))
    return d.isValid() ? d : v
  }
  if (Array.isArray(v)) return v.filter(x => x !== null).map(datesOf)
  if (isPlainObject(v)) return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null).map(([k, x]) => [k, datesOf(x)]))
  return v
}
