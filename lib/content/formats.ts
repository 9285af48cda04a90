/**
 * Parsing and serializing entry files: JSON (two-space indent, final newline), YAML, and Markdown
 * (YAML frontmatter plus `body`). Markdown keeps its body byte for byte when only frontmatter
 * changes, and its frontmatter text byte for byte when only the body changes.
 */
import matter from 'gray-matter'
import { load as loadYaml, dump as dumpYaml } from 'js-yaml'
import { isDeepStrictEqual } from 'node:util'

export type EntryFormat = 'json' | 'yaml' | 'md' | 'mdx' | 'toml'
export type EntryData = Record<string, unknown>

/** The file extensions of each format; the first one is used for new files. */
export const FORMAT_EXTENSIONS: Record<EntryFormat, string[]> = {
  md: ['.md', '.markdown'],
  mdx: ['.mdx'],
  json: ['.json'],
  yaml: ['.yaml', '.yml'],
  toml: ['.toml']
}

/** Options of serializeEntry. */
export interface SerializeOptions {
  /** The frontmatter kind of a NEW md/mdx file (existing files keep theirs); default yaml. */
  frontmatter?: 'yaml' | 'toml' | 'json'
}

/**
 * Whether entries of a format are Markdown-like: frontmatter fields plus a `body`.
 * @param format an entry format
 * @returns true for md and mdx
 */
export function isMarkdownFormat (format: EntryFormat | string | undefined): format is 'md' | 'mdx' {
  return format === 'md' || format === 'mdx'
}

/** A file that cannot be decoded into entry data. */
export class EntryParseError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'EntryParseError'
  }
}

const yamlEngine = {
  parse: (text: string): object => {
    const value = loadYaml(text)
    return (value ?? {}) as object
  },
  stringify: (value: object): string => dumpYaml(value)
}

/**
 * Decodes a file's text into entry data.
 * @param format the collection's format
 * @param text the file content
 * @returns the entry data; throws EntryParseError when it cannot be decoded into an object
 */
export function parseEntry (format: EntryFormat, text: string): EntryData {
  let value: unknown
  try {
    if (format === 'json') value = JSON.parse(text)
    else if (format === 'yaml') value = text.trim() === '' ? {} : loadYaml(text)
    else return parseMarkdown(text).data
  } catch (err) {
    throw new EntryParseError(firstLine((err as Error).message))
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new EntryParseError(`${format.toUpperCase()} content must be an object`)
  }
  return value as EntryData
}

/**
 * Splits a Markdown file into frontmatter data, its raw head (delimiters included) and the body.
 * @param text the file content
 * @returns `data` is the frontmatter plus `body`
 */
export function parseMarkdown (text: string): { data: EntryData, head: string, body: string } {
  let file: matter.GrayMatterFile<string>
  try {
    file = matter(text, { engines: { yaml: yamlEngine } })
  } catch (err) {
    throw new EntryParseError(firstLine((err as Error).message))
  }
  const front = file.data as unknown
  if (front === null || typeof front !== 'object' || Array.isArray(front)) {
    throw new EntryParseError('Markdown frontmatter must be a YAML mapping')
  }
  const body = file.content
  const head = text.slice(0, text.length - body.length)
  return { data: { ...(front as EntryData), body }, head, body }
}

/**
 * Encodes entry data as file text.
 * @param format the collection's format
 * @param data the entry data (for Markdown: frontmatter fields plus `body`)
 * @param previousText the file's current text, so untouched Markdown parts stay byte for byte
 * @returns the file content
 */
export function serializeEntry (format: EntryFormat, data: EntryData, previousText?: string, _opts: SerializeOptions = {}): string {
  if (format === 'json') return JSON.stringify(data, null, 2) + '\n'
  if (format === 'yaml') return dumpYaml(data)
  const { body, ...front } = data
  const bodyText = typeof body === 'string' ? body : ''
  if (previousText !== undefined) {
    try {
      const previous = parseMarkdown(previousText)
      const { body: _oldBody, ...oldFront } = previous.data
      if (isDeepStrictEqual(oldFront, front)) return previous.head + bodyText
    } catch {
      // The previous file was unreadable: write it anew.
    }
  }
  if (Object.keys(front).length === 0) return bodyText
  const eol = previousText !== undefined && previousText.startsWith('---\r\n') ? '\r\n' : '\n'
  const yaml = dumpYaml(front).replace(/\n/g, eol)
  return `---${eol}${yaml}---${eol}${bodyText}`
}

function firstLine (message: string): string {
  return message.split('\n')[0] ?? message
}
