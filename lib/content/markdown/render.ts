/** `renderMarkdown`: Markdown body to HTML whose editable blocks carry source hints. */
import { unified } from 'unified'
import remarkRehype from 'remark-rehype'
import rehypeParse from 'rehype-parse'
import rehypeSanitize, { defaultSchema, type Options as Schema } from 'rehype-sanitize'
import { toHtml } from 'hast-util-to-html'
import type { Root as HastRoot, Element } from 'hast'
import { visit, EXIT } from 'unist-util-visit'
import type { State as MdxState } from 'mdast-util-to-hast'
import { remarkCmsSource, rehypeCmsSource, type CmsSourceOptions } from './editable-blocks.js'
import { markdownTooDeep, plainTextTree } from './nesting-limit.js'
import { bodyParser } from './parse-body.js'

/** Options of renderMarkdown. */
export interface RenderMarkdownOptions extends CmsSourceOptions {
  /** Pass raw HTML in the Markdown through unsanitized (only for fully trusted content). */
  allowDangerousHtml?: boolean
  /** Read the body as MDX: ESM and expressions render nothing, a JSX element its children (never editable). */
  mdx?: boolean
}

/** What MDX nodes render to: nothing for code, their children for JSX elements. */
const MDX_HANDLERS = {
  mdxjsEsm: () => undefined,
  mdxFlowExpression: () => undefined,
  mdxTextExpression: () => undefined,
  mdxJsxFlowElement: (state: MdxState, node: Parameters<MdxState['all']>[0]) => ({ type: 'element' as const, tagName: 'div', properties: {}, children: state.all(node) }),
  mdxJsxTextElement: (state: MdxState, node: Parameters<MdxState['all']>[0]) => ({ type: 'element' as const, tagName: 'span', properties: {}, children: state.all(node) })
}

/** The default sanitize schema plus our attributes, and `mark` and `abbr` (the inline allowlist keeps them). */
const SANITIZE_SCHEMA: Schema = {
  ...defaultSchema,
  tagNames: [...(defaultSchema.tagNames ?? []), 'mark', 'abbr'],
  attributes: {
    ...defaultSchema.attributes,
    '*': [...(defaultSchema.attributes?.['*'] ?? []), 'dataCmsSrc', 'dataCmsMd']
  }
}

/**
 * Renders a Markdown body (CommonMark + GFM) to HTML whose wrapper carries `data-cms-md` and each
 * editable block `data-cms-src`; raw HTML is sanitized unless `allowDangerousHtml`.
 * @param body the Markdown body, exactly as stored
 * @param opts the entry and field
 * @returns the HTML
 */
export function renderMarkdown (body: string, opts: RenderMarkdownOptions): string {
  if (opts.allowDangerousHtml !== true) return toHtml(renderTree(body, opts))
  if (markdownTooDeep(body)) return toHtml(plainTextTree(body, opts))
  return toHtml(renderRaw(body, opts, true), { allowDangerousHtml: true })
}

/**
 * The sanitized tree renderMarkdown serializes (what a browser builds from its output).
 * @param body the Markdown body
 * @param opts the entry and field
 * @returns the hast tree
 */
export function renderTree (body: string, opts: RenderMarkdownOptions): HastRoot {
  if (markdownTooDeep(body)) return plainTextTree(body, opts)
  const rendered = renderRaw(body, opts, false)
  // Raw HTML is whole only once parsed, as a browser does; without it that parse (a third of a render) is skipped.
  const parse = needsHtmlParse(rendered, body)
  const tree = sanitizeRendered(parse ? rendered : asParsed(rendered), parse)
  relinkClobberedIds(tree)
  return tree
}

function needsHtmlParse (tree: HastRoot, body: string): boolean {
  if (body.includes('\r')) return true
  let needed = false
  visit(tree, (node) => {
    if (node.type === 'raw' || (node.type === 'element' && node.tagName === 'a' && hasLinkInside(node))) {
      needed = true
      return EXIT
    }
  })
  return needed
}

/** The HTML parser reads a data attribute without a value (remark-rehype's `true`) as ''. */
function asParsed (tree: HastRoot): HastRoot {
  visit(tree, 'element', (node) => {
    for (const [name, value] of Object.entries(node.properties)) if (value === true && name.startsWith('data')) node.properties[name] = ''
  })
  return tree
}

function hasLinkInside (link: Element): boolean {
  let found = false
  visit(link, 'element', (node) => {
    if (node !== link && node.tagName === 'a') { found = true; return EXIT }
  })
  return found
}

/** In-page links (footnote references) point at the ids the sanitizer prefixed against clobbering. */
function relinkClobberedIds (tree: HastRoot): void {
  const ids = new Set<string>()
  const inPageLinks: Element[] = []
  visit(tree, 'element', (node) => {
    if (typeof node.properties.id === 'string') ids.add(node.properties.id)
    const href = node.properties.href
    if (node.tagName === 'a' && typeof href === 'string' && href.startsWith('#')) inPageLinks.push(node)
  })
  for (const link of inPageLinks) {
    const target = (defaultSchema.clobberPrefix ?? 'user-content-') + (link.properties.href as string).slice(1)
    if (ids.has(target)) link.properties.href = '#' + target
  }
}

const htmlSanitizer = unified().use(rehypeParse, { fragment: true }).use(rehypeSanitize, SANITIZE_SCHEMA).freeze()
const treeSanitizer = unified().use(rehypeSanitize, SANITIZE_SCHEMA).freeze()

/**
 * Sanitizes a rendered tree the way renderMarkdown does.
 * @param tree the tree (not changed)
 * @param parse serialize and parse it first, as a browser does (raw HTML is only whole then)
 * @returns the sanitized tree
 */
export function sanitizeRendered (tree: HastRoot, parse: boolean): HastRoot {
  if (!parse) return treeSanitizer.runSync(tree) as HastRoot
  return htmlSanitizer.runSync(htmlSanitizer.parse(toHtml(tree, { allowDangerousHtml: true }))) as HastRoot
}

function renderRaw (body: string, opts: RenderMarkdownOptions, trusted: boolean): HastRoot {
  const processor = unified()
    .use(remarkCmsSource)
    // rehype-sanitize prefixes ids itself; remark-rehype must not do it a second time.
    .use(remarkRehype, { allowDangerousHtml: true, ...(trusted ? {} : { clobberPrefix: '' }), ...(opts.mdx === true ? { handlers: MDX_HANDLERS } : {}) })
    .use(rehypeCmsSource, opts)
  return processor.runSync(bodyParser(opts)(body), body)
}
