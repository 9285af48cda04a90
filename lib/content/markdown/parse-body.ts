/**
 * The one Markdown parser md_block uses for bodies (CommonMark + GFM, as renderMarkdown).
 */
import { unified } from 'unified'
import remarkParse from 'remark-parse'
import remarkGfm from 'remark-gfm'
import type { Root } from 'mdast'

/** Parses Markdown text to an mdast tree with positions. */
export type BodyParser = (text: string) => Root

/**
 * Builds a parser configured as renderMarkdown's (CommonMark + GFM); one per edit, reused for
 * every parse the edit makes.
 * @returns the parser
 */
export function bodyParser (): BodyParser {
  const processor = unified().use(remarkParse).use(remarkGfm).freeze()
  return (text) => processor.parse(text)
}
