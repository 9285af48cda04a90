/**
 * Finds a Markdown file's frontmatter without evaluating anything: YAML (`---`), TOML (`+++`), a
 * JSON object at the top, or Eleventy's `---js` (read by js-frontmatter.ts); other languages are
 * refused.
 */
import { EntryParseError } from './parse-error.js'

/** The frontmatter kinds a file may carry. */
export type FrontmatterKind = 'yaml' | 'toml' | 'json' | 'js'

/** A Markdown file cut into its parts; `open + inner + close + body` is the whole text. */
export interface MarkdownParts {
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

const FENCE = /^(\uFEFF?)(---|\+\+\+)([^\r\n]*)(\r?\n|$)/

/** Cuts a Markdown file into frontmatter and body; throws EntryParseError for an unknown language. */
export function splitMarkdown (text: string): MarkdownParts {
  const fence = FENCE.exec(text)
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

/**
 * Whether a body written alone would read back as something else (it would start a frontmatter),
 * so that it needs an empty frontmatter block before it.
 */
export function bodyNeedsFence (body: string): boolean {
  return /^(\uFEFF|---|\+\+\+|\{)/.test(body)
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

/** Hugo's JSON frontmatter: the object at the top of the file, up to where it closes. */
function jsonFrontmatter (text: string): MarkdownParts {
  const start = text.indexOf('{')
  let depth = 0
  let inString = false
  for (let i = start; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
      continue
    }
    if (c === '"') inString = true
    else if (c === '{' || c === '[') depth++
    else if (c === '}' || c === ']') {
      depth--
      if (depth === 0) {
        const rest = /^[ \t]*(\r?\n|$)/.exec(text.slice(i + 1))
        const closeLength = rest === null ? 0 : rest[0].length
        return {
          kind: 'json',
          open: text.slice(0, start),
          inner: text.slice(start, i + 1),
          close: text.slice(i + 1, i + 1 + closeLength),
          body: text.slice(i + 1 + closeLength)
        }
      }
    }
  }
  throw new EntryParseError('JSON frontmatter is never closed')
}
