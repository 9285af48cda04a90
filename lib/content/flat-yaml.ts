/**
 * Reads the plain shape most frontmatter has, without the `yaml` package's composer (profiled: the
 * composer was half of an index build's CPU): one mapping of `key: value` lines whose values are
 * single-line scalars (plain, single- or double-quoted without escapes), flow lists of such
 * scalars, block lists of them, or simple literal and folded block scalars (one indentation, no
 * blank lines). Scalars resolve with the `yaml` package's own YAML 1.2 core schema tags, so a
 * text in that shape reads exactly as `parseYamlText` reads it. Anything else (other block
 * scalars, nested mappings, anchors and aliases, tags, merge keys, escapes, comments after values,
 * tabs, a CR not before LF, control characters, duplicate or non-string keys, `__proto__`) is
 * declined with `undefined` and goes to the full parser. CR LF ends a line as LF does. One pass
 * over the lines, no regular expression that can backtrack, nothing evaluated.
 */
import { Schema, isScalar } from 'yaml'
import { MAX_YAML_LENGTH } from './yaml-text.js'

/** A plain scalar's resolution: the core schema's tags that are tried by their test, in order. */
interface TestedTag { test: RegExp, resolve: (source: string, onError: (message: string) => void, options: object) => unknown }

const CORE_TAGS: TestedTag[] = new Schema({ schema: 'core' }).tags
  .filter((tag): tag is typeof tag & TestedTag => tag.default === true && tag.test instanceof RegExp && typeof tag.resolve === 'function' && !('collection' in tag && tag.collection !== undefined))

/** The options `yaml` passes to a tag's resolve under `parseYamlText`'s settings (its defaults). */
const RESOLVE_OPTIONS = { intAsBigInt: false }

/** Longer keys are left to the full parser (it limits implicit keys to 1,024 characters). */
const MAX_KEY_LENGTH = 256

/** What `declined` says: this text is not in the shape read here. */
const DECLINED = Symbol('declined')

/** A key: letters, digits, `_`, `-` and `.`, starting with a letter or `_`. */
const KEY_LINE = /^([A-Za-z_][\w.-]*):(?: +|$)/
/** Characters the full parser decides about (controls but the line feed, tab, CR, DEL, C1, BOM, line separators, non-characters). */
// eslint-disable-next-line no-control-regex
const UNSAFE_CHARS = /[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]|\r(?!\n)/
/** Plain scalars starting with one of these are indicators or reserved: declined. */
const INDICATOR_START = '-?:,[]{}#&*!|>\'"%@`'

/**
 * Reads a YAML text in the flat shape.
 * @param text the YAML text (a frontmatter's inner text, or a data file)
 * @returns the mapping as `parseYamlText` gives it, or undefined when the text is not in that shape
 */
export function readFlatYaml (text: string): Record<string, unknown> | undefined {
  if (text.length > MAX_YAML_LENGTH || UNSAFE_CHARS.test(text)) return undefined
  // CR LF ends a line as LF does (no value read here spans a line break).
  const lines = text.includes('\r') ? text.split('\r\n').join('\n').split('\n') : text.split('\n')
  const out: Record<string, unknown> = {}
  let keys = 0
  let i = 0
  while (i < lines.length) {
    const line = lines[i] as string
    if (isBlankOrComment(line)) { i++; continue }
    const key = KEY_LINE.exec(line)
    if (key === null) return undefined
    const name = key[1] as string
    if (name.length > MAX_KEY_LENGTH || name === '__proto__' || Object.hasOwn(out, name) || resolvePlain(name) !== name) return undefined
    const rest = line.slice(key[0].length).trimEnd()
    let value: unknown
    i++
    if (rest === '') {
      // A block list below the key, or nothing (null).
      const list = readBlockList(lines, i)
      if (list === DECLINED) return undefined
      if (list === null) value = null
      else { value = list.items; i = list.next }
    } else if (rest === '|' || rest === '|-' || rest === '>' || rest === '>-') {
      const block = readBlockScalar(lines, i, rest)
      if (block === DECLINED) return undefined
      value = block.value
      i = block.next
    } else {
      value = readValue(rest)
      if (value === DECLINED) return undefined
    }
    setKey(out, name, value)
    keys++
  }
  return keys === 0 ? undefined : out
}

/** The full parser's way of setting a key (`addPairToJSMap`): a name already "in" the object is defined. */
function setKey (out: Record<string, unknown>, name: string, value: unknown): void {
  if (name in out) Object.defineProperty(out, name, { value, writable: true, enumerable: true, configurable: true })
  else out[name] = value
}

function isBlankOrComment (line: string): boolean {
  let j = 0
  while (j < line.length && line.charCodeAt(j) === 32) j++
  return j === line.length || line.charCodeAt(j) === 35 /* # */
}

/**
 * The block list starting at line `from` (items `- value`, all at one indentation), or null when
 * the next content line is another key at column 0 (or there is none).
 */
function readBlockList (lines: string[], from: number): { items: unknown[], next: number } | null | typeof DECLINED {
  let i = from
  while (i < lines.length && isBlankOrComment(lines[i] as string)) i++
  if (i >= lines.length) return null
  const first = lines[i] as string
  const indent = indentOf(first)
  if (first.charCodeAt(indent) !== 45 /* - */) return indent === 0 ? null : DECLINED
  const items: unknown[] = []
  for (;;) {
    const line = lines[i] as string
    if (indentOf(line) !== indent || line.charCodeAt(indent) !== 45) break
    const after = line.charCodeAt(indent + 1)
    if (after !== 32 && !Number.isNaN(after)) return DECLINED
    const rest = line.slice(indent + 2).trim()
    // An item that starts like another list or a flow collection is left to the full parser.
    if (rest === '' || rest.charCodeAt(0) === 91 /* [ */) return DECLINED
    const value = readValue(rest)
    if (value === DECLINED) return DECLINED
    items.push(value)
    i++
    while (i < lines.length && isBlankOrComment(lines[i] as string)) i++
    if (i >= lines.length) return { items, next: i }
  }
  // What follows the list must be the next key at column 0.
  return indentOf(lines[i] as string) === 0 && (lines[i] as string).charCodeAt(0) !== 45 ? { items, next: i } : DECLINED
}

/**
 * A block scalar under a key at column 0 (`|`, `|-`, `>`, `>-`): its lines all at one
 * indentation, none blank, none more indented, none ending in a space. Literal keeps the line
 * breaks, folded joins the lines with a space; `-` strips the final line break.
 */
function readBlockScalar (lines: string[], from: number, header: string): { value: string, next: number } | typeof DECLINED {
  const first = lines[from]
  if (first === undefined) return DECLINED
  const indent = indentOf(first)
  if (indent === 0 || indent === first.length) return DECLINED
  const parts: string[] = []
  let i = from
  for (; i < lines.length; i++) {
    const line = lines[i] as string
    const n = indentOf(line)
    if (n === line.length) {
      // A blank line: inside the scalar (or trailing it) it changes the value; left to the full parser.
      if (i === lines.length - 1 && line === '') break
      return DECLINED
    }
    if (n === 0) break
    if (n !== indent || line.charCodeAt(line.length - 1) === 32) return DECLINED
    parts.push(line.slice(indent))
  }
  // A last line without its line break (a data file's end) clips differently: left to the full parser.
  if (i === lines.length) return DECLINED
  const body = parts.join(header.charCodeAt(0) === 124 /* | */ ? '\n' : ' ')
  return { value: header.length === 2 ? body : body + '\n', next: i }
}

function indentOf (line: string): number {
  let j = 0
  while (j < line.length && line.charCodeAt(j) === 32) j++
  return j
}

/** A value written on the key's (or the item's) line, trimmed at its end. */
function readValue (rest: string): unknown {
  const c = rest.charCodeAt(0)
  if (c === 39 /* ' */) return readSingleQuoted(rest)
  if (c === 34 /* " */) return readDoubleQuoted(rest)
  if (c === 91 /* [ */) return readFlowList(rest)
  return readPlain(rest, false)
}

/** `'...'` on one line, `''` for a quote; nothing after the closing quote. */
function readSingleQuoted (s: string): string | typeof DECLINED {
  if (s.length < 2 || s.charCodeAt(s.length - 1) !== 39) return DECLINED
  const inner = s.slice(1, -1)
  for (let j = 0; j < inner.length; j++) {
    if (inner.charCodeAt(j) !== 39) continue
    if (inner.charCodeAt(j + 1) !== 39) return DECLINED
    j++
  }
  return inner.includes('\'\'') ? inner.replaceAll('\'\'', '\'') : inner
}

/** `"..."` on one line without escapes; nothing after the closing quote. */
function readDoubleQuoted (s: string): string | typeof DECLINED {
  if (s.length < 2 || s.charCodeAt(s.length - 1) !== 34) return DECLINED
  const inner = s.slice(1, -1)
  return inner.includes('"') || inner.includes('\\') ? DECLINED : inner
}

/** `[a, 'b', "c"]` on one line: scalars only, no empty or trailing item. */
function readFlowList (s: string): unknown[] | typeof DECLINED {
  if (s.charCodeAt(s.length - 1) !== 93 /* ] */) return DECLINED
  const inner = s.slice(1, -1)
  if (inner.trim() === '') return inner === '' ? [] : DECLINED
  const items: unknown[] = []
  let j = 0
  for (;;) {
    while (inner.charCodeAt(j) === 32) j++
    let end: number
    let value: unknown
    const c = inner.charCodeAt(j)
    if (c === 39 || c === 34) {
      end = inner.indexOf(String.fromCharCode(c), j + 1)
      // A quote inside the item ('' or an escaped one) is left to the full parser.
      if (end === -1 || inner.charCodeAt(end + 1) === c) return DECLINED
      value = c === 39 ? readSingleQuoted(inner.slice(j, end + 1)) : readDoubleQuoted(inner.slice(j, end + 1))
      end++
      while (inner.charCodeAt(end) === 32) end++
    } else {
      end = inner.indexOf(',', j)
      if (end === -1) end = inner.length
      value = readPlain(inner.slice(j, end).trimEnd(), true)
    }
    if (value === DECLINED) return DECLINED
    items.push(value)
    if (end >= inner.length) return items
    if (inner.charCodeAt(end) !== 44 /* , */) return DECLINED
    j = end + 1
    // `[a, ]` and `[a,]`: a trailing comma is left to the full parser.
    if (inner.slice(j).trim() === '') return DECLINED
  }
}

/**
 * A plain scalar: no indicator first (but `-` before a letter, digit or dot: `-1`, `-.inf`), no
 * `: ` or ` #` inside, no `:` last (in a flow list: no `:`, quote or flow indicator at all).
 */
function readPlain (s: string, inFlow: boolean): unknown {
  if (s === '' || (INDICATOR_START.includes(s.charAt(0)) && !(s.charCodeAt(0) === 45 && /^-[\w.]/.test(s)))) return DECLINED
  if (s.includes(': ') || s.includes(' #') || s.endsWith(':')) return DECLINED
  if (inFlow && /[[\]{}:#'"]/.test(s)) return DECLINED
  return resolvePlain(s)
}

/**
 * The value of a plain scalar under the core schema: the first tag whose test matches resolves it
 * (a tag that reports an error declines), else it is the string.
 */
function resolvePlain (s: string): unknown {
  for (const tag of CORE_TAGS) {
    if (!tag.test.test(s)) continue
    let failed = false
    const res = tag.resolve(s, () => { failed = true }, RESOLVE_OPTIONS)
    if (failed) return DECLINED
    return isScalar(res) ? res.value : res
  }
  return s
}
