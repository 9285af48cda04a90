/**
 * Entry files: JSON, YAML and TOML data, Markdown/MDX with YAML, TOML, JSON or `---js` frontmatter.
 * Nothing is evaluated, every parse is bounded, a rewrite changes only the bytes of what changed.
 */
import { createRequire } from 'node:module'
import type { FormattingOptions } from 'jsonc-parser'
import { isDeepStrictEqual } from 'node:util'
import { EntryParseError, entryParseError } from './parse-error.js'
import { parseYamlText, editYamlText, renderYaml } from './yaml-text.js'
import { parseTomlText, editTomlText, renderToml } from './toml-text.js'
import { parseJsFrontmatter, editJsFrontmatter } from './js-frontmatter.js'
import { diffData, eolOf, isPlainObject } from './data-diff.js'
import { dataTooDeep, MAX_DATA_DEPTH } from './data-depth.js'

/* jsonc-parser is loaded on the first edit of a JSON text: a Markdown site never needs it. */
const requireHere = createRequire(import.meta.url)

export { EntryParseError }
export type EntryFormat = 'json' | 'yaml' | 'md' | 'mdx' | 'toml'
export type EntryData = Record<string, unknown>
/** The frontmatter kinds a file may carry. */
export type FrontmatterKind = 'yaml' | 'toml' | 'json' | 'js'

/** The file extensions of each format; the first one is used for new files. */
export const FORMAT_EXTENSIONS: Record<EntryFormat, string[]> = {
  md: ['.md', '.markdown'],
  mdx: ['.mdx'],
  json: ['.json'],
  yaml: ['.yaml', '.yml'],
  toml: ['.toml']
}

/** Each data language's reader and in-place editor (the editor touches only the bytes that change). */
const LANGUAGES: Record<FrontmatterKind, { parse: (text: string) => unknown, edit: (text: string, before: unknown, after: unknown) => string }> = {
  yaml: { parse: text => parseYamlText(text) ?? {}, edit: editYamlText },
  toml: { parse: parseTomlText, edit: (text, before, after) => editTomlText(text, before as EntryData, after as EntryData) },
  json: { parse: parseJsonText, edit: editJsonText },
  js: { parse: parseJsFrontmatter, edit: (text, before, after) => editJsFrontmatter(text, before as EntryData, after as EntryData) }
}

/** Each language's writer of new text, and the line that fences it as frontmatter. */
const WRITERS = { yaml: renderYaml, toml: renderToml, json: (value: unknown) => JSON.stringify(value, null, 2) + '\n' }
const FENCES = { yaml: '---\n', toml: '+++\n', json: '' }

/** Whether entries of a format are Markdown-like: frontmatter fields plus a `body`. */
export function isMarkdownFormat (format: string | null | undefined): format is 'md' | 'mdx' {
  return format === 'md' || format === 'mdx'
}

/**
 * Decodes a file's text into entry data.
 * @returns the entry data; throws EntryParseError when it cannot be decoded into an object
 */
export function parseEntry (format: EntryFormat, text: string): EntryData {
  if (isMarkdownFormat(format)) return parseMarkdown(text).data
  const value = LANGUAGES[format].parse(text)
  if (Array.isArray(value)) return boundedDepth({ items: value })
  if (!isPlainObject(value)) throw new EntryParseError(`${format.toUpperCase()} content must be an object or a list`)
  return boundedDepth(value)
}

/** Content nested deeper than requests may write is unreadable: all that follows the parse recurses per level. */
function boundedDepth (data: EntryData): EntryData {
  if (dataTooDeep(data)) throw new EntryParseError(`The content is nested deeper than ${MAX_DATA_DEPTH} levels`)
  return data
}

/**
 * The length of a Markdown file's frontmatter text: 0 when it has none, or when it cannot be cut out (its parse then fails at once).
 * @returns characters
 */
export function frontmatterLength (text: string): number {
  return readable(splitMarkdown, text)?.inner.length ?? 0
}

/**
 * Splits a Markdown file into frontmatter data, its raw head (delimiters included) and the body.
 * @returns `data` is the frontmatter plus `body`; `kind` is the frontmatter's kind (null: none)
 */
export function parseMarkdown (text: string): { data: EntryData, head: string, kind: FrontmatterKind | null } {
  const parts = splitMarkdown(text)
  const front = boundedDepth(parseFrontmatter(parts.kind, parts.inner))
  return { data: { ...front, body: parts.body }, head: parts.open + parts.inner + parts.close, kind: parts.kind }
}

/**
 * Encodes entry data as file text; with `previousText`, only what changed is rewritten in it (the
 * same text when the data is unchanged).
 * @param opts `frontmatter`: the kind of a new md/mdx file (default yaml); `previousData`: what
 * `previousText` was read as (a Markdown file's frontmatter is then not parsed again)
 */
export function serializeEntry (
  format: EntryFormat, data: EntryData, previousText?: string, opts: { frontmatter?: Exclude<FrontmatterKind, 'js'>, previousData?: EntryData } = {}
): string {
  if (isMarkdownFormat(format)) return serializeMarkdown(data, previousText, opts.frontmatter ?? 'yaml', opts.previousData)
  const before = previousText === undefined ? undefined : readable(LANGUAGES[format].parse, previousText)
  if (before === undefined) return WRITERS[format](data)
  // A list file (read as `{ items }`) is written as a list again.
  const isList = Array.isArray(before) && Array.isArray(data.items) && Object.keys(data).length === 1
  return rewrite(format, previousText!, before, isList ? data.items : data)
}

/** What `read` makes of a text; undefined when the text is unreadable (the file is then written anew). */
function readable<T> (read: (text: string) => T, text: string): T | undefined {
  try { return read(text) } catch (err) {
    if (!(err instanceof EntryParseError)) throw err
    return undefined
  }
}

/** A text in a data language changed from `before` to `after` (the same text when they are equal). */
function rewrite (kind: FrontmatterKind, text: string, before: unknown, after: unknown): string {
  return isDeepStrictEqual(before, after) ? text : LANGUAGES[kind].edit(text, before, after)
}

function parseFrontmatter (kind: FrontmatterKind | null, inner: string): EntryData {
  if (kind === null) return {}
  const value = LANGUAGES[kind].parse(inner)
  if (!isPlainObject(value)) throw new EntryParseError(`Markdown frontmatter must be a ${kind.toUpperCase()} mapping`)
  return value
}

function serializeMarkdown (data: EntryData, previousText: string | undefined, newKind: Exclude<FrontmatterKind, 'js'>, previousData?: EntryData): string {
  const { body, ...front } = data
  const bodyText = typeof body === 'string' ? body : ''
  const previous = previousText === undefined ? undefined : readable(splitMarkdown, previousText)
  if (previous?.kind != null) {
    const kind = previous.kind
    const { body: _body, ...known } = previousData ?? {}
    const oldFront = previousData !== undefined ? known : readable(inner => parseFrontmatter(kind, inner), previous.inner)
    if (oldFront !== undefined) return previous.open + rewrite(kind, previous.inner, oldFront, front) + previous.close + bodyText
  }
  const eol = previousText === undefined ? '\n' : eolOf(previousText)
  // A body that would read back as something else (it starts like a frontmatter) stays behind an empty one.
  if (Object.keys(front).length === 0) return /^(\uFEFF|---|\+\+\+|\{)/.test(bodyText) ? `---${eol}---${eol}${bodyText}` : bodyText
  return (FENCES[newKind] + WRITERS[newKind](front) + FENCES[newKind]).replace(/\r?\n/g, eol) + bodyText
}

/** A Markdown file cut into its parts; `open + inner + close + body` is the whole text. */
interface MarkdownParts {
  /** null when the file has no frontmatter (then `open`, `inner` and `close` are empty). */
  kind: FrontmatterKind | null
  /** A byte order mark and the opening delimiter line. */
  open: string
  /** The frontmatter's own text, as its parser reads it. */
  inner: string
  /** The closing delimiter line, with its line ending. */
  close: string
  body: string
}

const OPENING_FENCE = /^(\uFEFF?)(---|\+\+\+)([^\r\n]*)(\r?\n|$)/

/** Cuts a Markdown file into frontmatter and body; throws EntryParseError for an unknown language. */
function splitMarkdown (text: string): MarkdownParts {
  const fence = OPENING_FENCE.exec(text)
  if (fence !== null) {
    const marker = fence[2]!
    const info = fence[3]!.trim()
    if (marker === '---' && (info === 'js' || info === 'javascript')) {
      const parts = closeFence(text, fence[0].length, marker)
      if (parts === null) throw new EntryParseError('JavaScript frontmatter is never closed')
      return { kind: 'js', open: fence[0], ...parts }
    }
    if (marker === '---' && info !== '' && info !== 'yaml' && info !== 'yml' && /^[A-Za-z]/.test(info)) {
      throw new EntryParseError(`Frontmatter language "${info.slice(0, 40)}" is not supported (YAML, TOML, JSON or JavaScript data only)`)
    }
    if (info === '' || (marker === '---' && (info === 'yaml' || info === 'yml'))) {
      const parts = closeFence(text, fence[0].length, marker)
      if (parts !== null) return { kind: marker === '---' ? 'yaml' : 'toml', open: fence[0], ...parts }
    }
    return noFrontmatter(text)
  }
  if (/^\uFEFF?\{([ \t]*\r?\n|\s*"|\s*\}[ \t]*(\r?\n|$))/.test(text)) return jsonFrontmatter(text)
  return noFrontmatter(text)
}

function noFrontmatter (text: string): MarkdownParts {
  return { kind: null, open: '', inner: '', close: '', body: text }
}

/** Finds the line that closes a fenced frontmatter (the marker, then only spaces); null when it is never closed. */
function closeFence (text: string, from: number, marker: string): { inner: string, close: string, body: string } | null {
  // From the line ending before `from` (the opening line's): a search for `\n---` runs faster than a line start.
  const line = marker === '---' ? /\n---[^\S\n]*(\n|$)/g : /\n\+\+\+[^\S\n]*(\n|$)/g
  line.lastIndex = from - 1
  const found = line.exec(text)
  if (found === null) return null
  const after = found.index + found[0].length
  return { inner: text.slice(from, found.index + 1), close: found[0].slice(1), body: text.slice(after) }
}

/** Hugo's JSON frontmatter: the object at the top of the file, up to the bracket that closes it (strings skipped whole). */
function jsonFrontmatter (text: string): MarkdownParts {
  const start = text.indexOf('{')
  const token = /"(?:[^"\\]|\\[\s\S])*"?|[{[]|[}\]]/g
  token.lastIndex = start
  let depth = 0
  for (let found = token.exec(text); found !== null; found = token.exec(text)) {
    if (found[0] === '{' || found[0] === '[') depth++
    else if (found[0] === '}' || found[0] === ']') depth--
    if (depth > 0) continue
    const end = token.lastIndex
    const close = /^[ \t]*(\r?\n|$)/.exec(text.slice(end))?.[0] ?? ''
    return { kind: 'json', open: text.slice(0, start), inner: text.slice(start, end), close, body: text.slice(end + close.length) }
  }
  throw new EntryParseError('JSON frontmatter is never closed')
}

/** Parses JSON text; throws EntryParseError when it is not JSON. */
function parseJsonText (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (err) {
    throw entryParseError(err)
  }
}

/** Changes a JSON text with jsonc-parser's `modify`, formatting only the new text (one-line containers stay one line). */
function editJsonText (text: string, before: unknown, after: unknown): string {
  const { applyEdits, findNodeAtLocation, format, modify, parseTree } = requireHere('jsonc-parser') as typeof import('jsonc-parser')
  // A file written as JSON.stringify writes it (no space anywhere) stays in that style.
  const trailing = /(?<!\s)\s*$/.exec(text)?.[0] ?? '\n'
  if (JSON.stringify(before) === text.slice(0, text.length - trailing.length)) return JSON.stringify(after) + trailing
  // The file's indentation unit (its first indented line's), two spaces when it has none.
  const indented = /\n([ \t]+)\S/.exec(text)?.[1] ?? '  '
  const unit = indented.startsWith('\t') ? '\t' : indented
  const formattingOptions: FormattingOptions = { insertSpaces: unit !== '\t', tabSize: unit === '\t' ? 1 : unit.length, eol: eolOf(text) }
  let current = text
  try {
    for (const change of diffData(before, after, text.length)) {
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
