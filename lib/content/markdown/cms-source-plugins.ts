/** The unified plugin pair that makes Markdown a site renders with remark and rehype editable in place. */
import type { Root as MdastRoot } from 'mdast'
import type { Root as HastRoot, Element } from 'hast'
import type { VFile } from 'vfile'
import { editableBlocks } from './editable-blocks.js'
import { formatSourceHint } from './source-hint.js'

/** What `rehypeCmsSource` needs to name the field. */
export interface CmsSourceOptions {
  collection: string
  id: string
  /** The field holding the Markdown (default `body`). */
  blockPath?: string
}

interface HastData { hName?: string, hProperties?: Record<string, unknown> }

/**
 * remark plugin: adds `data-cms-src` to every editable block (the file's text must be the stored body).
 * @returns the transformer
 */
export function remarkCmsSource () {
  return (tree: MdastRoot, file: VFile): void => {
    const body = String(file.value)
    for (const block of editableBlocks(tree)) {
      const node = block.node as { data?: HastData }
      const data: HastData = node.data ?? {}
      data.hProperties = { ...data.hProperties, dataCmsSrc: formatSourceHint(body, block.start, block.end) }
      if (block.asSpan) data.hName = 'span'
      node.data = data
    }
  }
}

/**
 * rehype plugin: wraps the document in `<div data-cms-md="<collection>/<id>#<blockPath>">`.
 * @param options the entry and field
 * @returns the transformer
 */
export function rehypeCmsSource (options: CmsSourceOptions) {
  const name = `${options.collection}/${options.id}#${options.blockPath ?? 'body'}`
  return (tree: HastRoot): void => {
    const wrapper: Element = { type: 'element', tagName: 'div', properties: { dataCmsMd: name }, children: tree.children as Element['children'] }
    tree.children = [wrapper]
  }
}
