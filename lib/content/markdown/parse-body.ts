/**
 * The one Markdown parser md_block uses for bodies (CommonMark + GFM), shared by the full-body
 * parse and the block window.
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

/**
 * Parses a body as md_block and renderMarkdown do (CommonMark + GFM).
 * @param body the Markdown body
 * @returns the tree with positions
 */
export function parseBody (body: string): Root {
  return bodyParser()(body)
}
