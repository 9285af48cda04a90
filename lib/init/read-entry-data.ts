/**
 * A small, bounded reader of entry files for `git cms init`'s schema inference: frontmatter
 * detected per file (YAML between `---` lines, TOML between `+++` lines, a JSON object at the top)
 * and whole JSON, YAML and TOML data files. It only reads; the service's own format layer
 * (lib/content/formats.ts) does the byte-preserving reads and writes. Content is data: YAML is
 * parsed with the 1.2 core schema (no custom tags, aliases capped), TOML with smol-toml, JSON with
 * JSON.parse; nothing is evaluated.
 */
import { parseDocument } from 'yaml'
import { parse as parseToml, TomlDate } from 'smol-toml'

/** The formats init recognises, by what a collection's `format` key says. */
export type InitFormat = 'md' | 'mdx' | 'json' | 'yaml' | 'toml'

/** The frontmatter kinds of md/mdx files. */
export type FrontmatterKind = 'yaml' | 'toml' | 'json'

/** What one file gave: its top-level fields, and the frontmatter kind for md/mdx (null: none). */
export interface EntryFields {
  data: Record<string, unknown>
  frontmatter: FrontmatterKind | null
}

const MAX_ALIASES = 100

/**
 * Reads a file's fields.
 * @param format the collection format the file belongs to
 * @param text the file's text
 * @returns the fields; throws an Error saying why when the file cannot be read
 */
export function readEntryFields (format: InitFormat, text: string): EntryFields {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  if (format === 'md' || format === 'mdx') return readFrontmatter(source)
  const value = format === 'json' ? JSON.parse(source) as unknown : format === 'yaml' ? readYaml(source) : readToml(source)
  return { data: asFields(value), frontmatter: null }
}

function readFrontmatter (text: string): EntryFields {
  const yaml = /^---[ \t]*\r?\n([\s\S]*?\r?\n)?---[ \t]*(\r?\n|$)/.exec(text)
  if (yaml !== null) return { data: asFields(readYaml(yaml[1] ?? '')), frontmatter: 'yaml' }
  const toml = /^\+\+\+[ \t]*\r?\n([\s\S]*?\r?\n)?\+\+\+[ \t]*(\r?\n|$)/.exec(text)
  if (toml !== null) return { data: asFields(readToml(toml[1] ?? '')), frontmatter: 'toml' }
  if (text.startsWith('{')) return { data: asFields(JSON.parse(leadingJsonObject(text))), frontmatter: 'json' }
  return { data: {}, frontmatter: null }
}

function readYaml (text: string): unknown {
  const doc = parseDocument(text, { schema: 'core', uniqueKeys: true, prettyErrors: false })
  const first = doc.errors[0]
  if (first !== undefined) throw new Error(`YAML: ${firstLine(first.message)}`)
  return doc.toJS({ maxAliasCount: MAX_ALIASES }) as unknown
}

function readToml (text: string): unknown {
  try {
    return plain(parseToml(text))
  } catch (err) {
    throw new Error(`TOML: ${firstLine((err as Error).message)}`)
  }
}

/** Hugo's JSON frontmatter: the object that opens the file, up to its matching brace. */
function leadingJsonObject (text: string): string {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]
    if (inString) {
      if (ch === '\\') i++
      else if (ch === '"') inString = false
    } else if (ch === '"') inString = true
    else if (ch === '{') depth++
    else if (ch === '}' && --depth === 0) return text.slice(0, i + 1)
  }
  throw new Error('JSON frontmatter: the opening { is never closed')
}

/** TOML tables come with a null prototype and dates as TomlDate: plain objects and strings here. */
function plain (value: unknown): unknown {
  if (value instanceof TomlDate) return value.toISOString()
  if (Array.isArray(value)) return value.map(plain)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = plain(v)
    return out
  }
  return value
}

/** A top-level list is `{ items }` (section 11); an empty document has no fields. */
function asFields (value: unknown): Record<string, unknown> {
  if (value === null || value === undefined) return {}
  if (Array.isArray(value)) return { items: value }
  if (typeof value !== 'object') throw new Error(`the top level is a ${typeof value}, not a mapping or a list`)
  return value as Record<string, unknown>
}

function firstLine (message: string): string {
  return message.split('\n')[0] ?? message
}
