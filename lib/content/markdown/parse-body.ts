/**
 * The one Markdown parser block edits use for bodies (CommonMark + GFM, as renderMarkdown), and its
 * MDX variant (remark-mdx: ESM, JSX and expressions read as such, never as prose).
 */
import { unified } from 'unified'
import remarkParse from 'remark-parse'
import remarkGfm from 'remark-gfm'
import remarkMdx from 'remark-mdx'
import type { Root } from 'mdast'
import type {} from 'mdast-util-mdx'
import { parseInRegions } from './body-regions.js'

/** Parses Markdown text to an mdast tree with positions. */
export type BodyParser = (text: string) => Root

/**
 * A parser of a whole text at once, configured as renderMarkdown's (CommonMark + GFM); its cost
 * grows faster than the text past tens of KB (bodyParser's does not).
 * @param opts.mdx parse MDX (`.mdx` bodies) rather than Markdown
 * @returns the parser
 */
export function textParser (opts: { mdx?: boolean } = {}): BodyParser {
  const processor = opts.mdx === true
    ? unified().use(remarkParse).use(remarkMdx).use(remarkGfm).freeze()
    : unified().use(remarkParse).use(remarkGfm).freeze()
  return (text) => processor.parse(text)
}

/**
 * Builds a parser configured as renderMarkdown's (CommonMark + GFM); one per edit, reused for
 * every parse the edit makes. A long text is parsed region by region (body-regions.ts), in time
 * that follows its length.
 * @param opts.mdx parse MDX (`.mdx` bodies) rather than Markdown
 * @returns the parser
 */
export function bodyParser (opts: { mdx?: boolean } = {}): BodyParser {
  const parse = textParser(opts)
  return (text) => parseInRegions(text, parse)
}
