/**
 * Reading entry files for `git cms init`'s schema inference, through the service's own format layer
 * (lib/content/formats.ts): frontmatter detected per file, the same limits, nothing evaluated, so init
 * sees a file exactly as the service will.
 */
import { isMarkdownFormat, parseEntry, parseMarkdown, type EntryFormat, type FrontmatterKind } from '../content/formats.js'

/** The formats init recognises, by what a collection's `format` key says. */
export type InitFormat = EntryFormat

export type { FrontmatterKind }

/** What one file gave: its top-level fields, and the frontmatter kind for md/mdx (null: none). */
export interface EntryFields {
  data: Record<string, unknown>
  frontmatter: FrontmatterKind | null
}

/**
 * Reads a file's fields (a Markdown body left out).
 * @returns the fields; throws an Error saying why when the file cannot be read
 */
export function readEntryFields (format: InitFormat, text: string): EntryFields {
  if (!isMarkdownFormat(format)) return { data: parseEntry(format, text), frontmatter: null }
  const { data, kind } = parseMarkdown(text)
  const { body: _body, ...fields } = data
  return { data: fields, frontmatter: kind }
}
