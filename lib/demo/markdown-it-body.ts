/**
 * A post body as another site generator renders it (Hugo, Jekyll and Eleventy use their own
 * Markdown engines): markdown-it's HTML with no source hints, inside the one element a template
 * marks with `data-cms-md`. The inline editor asks the server for the hinted rendering itself.
 */
import MarkdownIt from 'markdown-it'
import { escapeHtml } from './html.js'

/** A markdown-it renderer. */
export type MarkdownRenderer = InstanceType<typeof MarkdownIt>

/**
 * A markdown-it renderer as a generator would configure it: raw HTML escaped (never passed
 * through), no typographic replacements, links checked by markdown-it's own `validateLink`.
 */
export function createMarkdownIt (): MarkdownRenderer {
  return new MarkdownIt({ html: false, linkify: false, typographer: false })
}

/**
 * The body container of a post rendered by markdown-it: the template's only addition is the
 * `data-cms-md="<collection>/<id>#body"` attribute.
 */
export function markdownItBody (md: MarkdownRenderer, collection: string, id: string, body: string): string {
  return `<div data-cms-md="${escapeHtml(`${collection}/${id}#body`)}">\n${md.render(body)}</div>`
}
