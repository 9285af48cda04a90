/**
 * Eleventy's `---js` front matter read as data with acorn, never run: an object literal or declarations
 * of literals (anything else makes the file unreadable); an edit splices the changed values' source.
 */
import { createRequire } from 'node:module'
import type { Node } from 'acorn'
import { EntryParseError } from './parse-error.js'
import { eolOf, isPlainObject, lineStart, nextLineStart, placeChanges, splice, type DataChange, type DataPath } from './data-diff.js'
import { isReservedKey } from './reserved-keys.js'

const requireHere = createRequire(import.meta.url)

interface AnyNode extends Node { [key: string]: unknown }

/** The parsed front matter: its data and where each value's source is. */
interface JsSource {
  data: Record<string, unknown>
  /** The object literal (object form), or null (declarations form). */
  root: AnyNode | null
  /** Declarations form: each name's declarator. */
  declarations: Map<string, AnyNode>
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/**
 * Reads `---js` front matter as data.
 * @returns the data; throws EntryParseError naming what is not a literal
 */
export function parseJsFrontmatter (inner: string): Record<string, unknown> {
  return readSource(inner).data
}

/**
 * Changes `---js` front matter from `before` to `after`, splicing only the changed values' source.
 * @returns the new text; throws EntryParseError when a change cannot be written as JavaScript data
 */
export function editJsFrontmatter (inner: string, before: Record<string, unknown>, after: Record<string, unknown>): string {
  let text: string | null = null
  try { text = placeChanges(inner, before, after, 0, placeChange, edited => readSource(edited).data) } catch (err) {
    if (err instanceof EntryParseError) throw err
  }
  if (text === null) throw new EntryParseError('The JavaScript front matter could not be changed in place')
  return text
}

/** One change spliced into the text; null when only its parent can be replaced whole. */
function placeChange (text: string, change: DataChange): string | null {
  const source = readSource(text)
  if (change.op === 'set') {
    const node = nodeAt(source, change.path)
    return node === null ? null : splice(text, node.start, node.end, render(change.value, text.slice(node.start, node.end)))
  }
  if (change.op === 'add') return addValue(text, source, change.path, change.value)
  // A declaration is removed; a list or object losing members is replaced whole instead (null).
  const declarator = source.root === null && change.path.length === 1 ? source.declarations.get(String(change.path[0])) : undefined
  return declarator === undefined ? null : splice(text, lineStart(text, declarator.start), nextLineStart(text, declarator.end), '')
}

function readSource (inner: string): JsSource {
  // Loaded on the first `---js` front matter: most sites have none.
  const { parse, parseExpressionAt } = requireHere('acorn') as typeof import('acorn')
  const start = inner.search(/\S/)
  if (start === -1) return { data: {}, root: null, declarations: new Map() }
  try {
    if (inner[start] === '{') {
      const root = parseExpressionAt(inner, start, { ecmaVersion: 'latest', locations: true }) as AnyNode
      const rest = inner.slice(root.end).replace(/\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|($))/g, (m, open?: string) => open === undefined ? '' : m)
      if (!/^[\s;]*$/.test(rest)) throw new EntryParseError(`JavaScript front matter: only one object literal is read (${describe(root)} is followed by more code)`)
      const data = valueOf(root)
      if (!isPlainObject(data)) throw new EntryParseError('JavaScript front matter must be an object')
      return { data, root, declarations: new Map() }
    }
    const program = parse(inner, { ecmaVersion: 'latest', sourceType: 'script', locations: true }) as unknown as AnyNode
    const data: Record<string, unknown> = {}
    const declarations = new Map<string, AnyNode>()
    for (const statement of program.body as AnyNode[]) {
      if (statement.type === 'EmptyStatement') continue
      if (statement.type !== 'VariableDeclaration') throw refuse(statement)
      for (const declarator of statement.declarations as AnyNode[]) {
        const id = declarator.id as AnyNode
        if (id.type !== 'Identifier') throw refuse(id)
        const name = id.name as string
        if (isReservedKey(name)) throw new EntryParseError(`JavaScript front matter: "${name}" is not a field name`)
        if (declarator.init === null) { data[name] = null; continue }
        data[name] = valueOf(declarator.init as AnyNode)
        declarations.set(name, declarator)
      }
    }
    return { data, root: null, declarations }
  } catch (err) {
    if (err instanceof EntryParseError) throw err
    throw new EntryParseError(`JavaScript front matter cannot be parsed: ${(err as Error).message}`)
  }
}

/** A literal's value; anything that would have to run is refused with its kind and line. */
function valueOf (node: AnyNode): unknown {
  switch (node.type) {
    case 'Literal':
      if (node.regex !== undefined || node.bigint !== undefined) throw refuse(node)
      return node.value
    case 'TemplateLiteral': {
      if ((node.expressions as AnyNode[]).length > 0) throw new EntryParseError(`JavaScript front matter: a template literal with \${} (line ${lineOf(node)}) is not supported (only literal data is read, nothing runs)`)
      return ((node.quasis as AnyNode[])[0]?.value as { cooked: string } | undefined)?.cooked ?? ''
    }
    case 'UnaryExpression': {
      const arg = node.argument as AnyNode
      if ((node.operator === '-' || node.operator === '+') && arg.type === 'Literal' && typeof arg.value === 'number') return node.operator === '-' ? -arg.value : arg.value
      throw refuse(node)
    }
    case 'ArrayExpression':
      return (node.elements as Array<AnyNode | null>).map(el => { if (el === null) throw refuse(node); return valueOf(el) })
    case 'ObjectExpression': {
      const out: Record<string, unknown> = {}
      for (const prop of node.properties as AnyNode[]) {
        if (prop.type !== 'Property' || prop.computed === true || prop.kind !== 'init' || prop.method === true || prop.shorthand === true) throw refuse(prop)
        const key = keyOf(prop)
        if (isReservedKey(key)) throw new EntryParseError(`JavaScript front matter: "${key}" is not a field name`)
        out[key] = valueOf(prop.value as AnyNode)
      }
      return out
    }
    default:
      throw refuse(node)
  }
}

function keyOf (prop: AnyNode): string {
  const key = prop.key as AnyNode
  return key.type === 'Identifier' ? key.name as string : String(key.value)
}

function refuse (node: AnyNode): EntryParseError {
  return new EntryParseError(`JavaScript front matter: ${describe(node)} (line ${lineOf(node)}) is not supported; only literal data is read (strings, numbers, booleans, null, arrays, objects), nothing runs`)
}

function describe (node: AnyNode): string {
  if (node.type === 'CallExpression' || node.type === 'NewExpression') return 'a function call'
  if (node.type === 'Property' && (node.kind === 'get' || node.kind === 'set')) return 'a getter or setter'
  if (node.type === 'Property' && node.method === true) return 'a method'
  if (node.type === 'SpreadElement') return 'a spread'
  if (node.type === 'Identifier' || (node.type === 'Property' && node.shorthand === true)) return 'a variable reference'
  if (/Function/.test(node.type)) return 'a function'
  if (node.type === 'Property' && node.computed === true) return 'a computed key'
  const words = node.type.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase()
  return `${/^[aeiou]/.test(words) ? 'an' : 'a'} ${words}`
}

function lineOf (node: AnyNode): number {
  return (node.loc?.start.line) ?? 1
}

/** The source node of the value at a path, or null. */
function nodeAt (source: JsSource, path: DataPath): AnyNode | null {
  if (path.length === 0) return source.root
  let node: AnyNode | null = source.root === null ? (source.declarations.get(String(path[0]))?.init as AnyNode | undefined) ?? null : propertyOf(source.root, String(path[0]))
  for (const key of path.slice(1)) {
    if (node === null) return null
    if (node.type === 'ArrayExpression') node = (node.elements as AnyNode[])[Number(key)] ?? null
    else if (node.type === 'ObjectExpression') node = propertyOf(node, String(key))
    else return null
  }
  return node
}

function propertyOf (object: AnyNode, key: string): AnyNode | null {
  const props = (object.properties as AnyNode[]).filter(p => keyOf(p) === key)
  return (props[props.length - 1]?.value as AnyNode | undefined) ?? null
}

function addValue (text: string, source: JsSource, path: DataPath, value: unknown): string {
  const key = String(path[path.length - 1])
  const parent = path.length === 1 ? source.root : nodeAt(source, path.slice(0, -1))
  const eol = eolOf(text)
  if (parent === null && path.length === 1) {
    if (!IDENTIFIER.test(key)) throw new EntryParseError(`JavaScript front matter: "${key}" cannot be declared as a variable`)
    const end = text.replace(/(?<!\s)\s+$/, '').length
    return splice(text, end, end, `${eol}const ${key} = ${render(value, '')};`)
  }
  if (parent?.type === 'ArrayExpression') {
    const items = parent.elements as AnyNode[]
    const last = items[items.length - 1]
    if (last === undefined) return splice(text, parent.start, parent.end, render([value], ''))
    return splice(text, last.end, last.end, `, ${render(value, text.slice(last.start, last.end))}`)
  }
  if (parent?.type !== 'ObjectExpression') throw new EntryParseError('The JavaScript front matter could not be changed in place')
  const props = parent.properties as AnyNode[]
  const name = IDENTIFIER.test(key) ? key : JSON.stringify(key)
  const last = props[props.length - 1]
  if (last === undefined) return splice(text, parent.start, parent.end, `{ ${name}: ${render(value, '')} }`)
  const indent = /^[ \t]*/.exec(text.slice(lineStart(text, last.start)))?.[0] ?? ''
  const multiline = text.slice(parent.start, last.start).includes('\n')
  const afterLast = /^\s*,/.exec(text.slice(last.end))
  const at = afterLast === null ? last.end : last.end + afterLast[0].length
  const entry = `${name}: ${render(value, '')}`
  return multiline
    ? splice(text, at, at, `${afterLast === null ? ',' : ''}${eol}${indent}${entry}${afterLast === null ? '' : ','}`)
    : splice(text, at, at, `${afterLast === null ? ',' : ''} ${entry}`)
}

/** A value as JavaScript source; a string keeps the quote style of the value it replaces. */
function render (value: unknown, previous: string): string {
  if (typeof value === 'string') {
    const quote = previous[0] === "'" || previous[0] === '`' ? previous[0] : '"'
    if (quote === '`' && !/[`\\]|\$\{/.test(value)) return `\`${value}\``
    if (quote === "'") return `'${JSON.stringify(value).slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'`
    return JSON.stringify(value)
  }
  if (Array.isArray(value)) return `[${value.map(v => render(v, '')).join(', ')}]`
  if (isPlainObject(value)) {
    const entries = Object.entries(value).map(([k, v]) => `${IDENTIFIER.test(k) ? k : JSON.stringify(k)}: ${render(v, '')}`)
    return entries.length === 0 ? '{}' : `{ ${entries.join(', ')} }`
  }
  return JSON.stringify(value) ?? 'null'
}
