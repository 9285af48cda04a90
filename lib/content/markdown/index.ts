/** Markdown blocks editable in place: rendering with source hints, block edits, drafts (re-exports only). */
export { renderMarkdown, type RenderMarkdownOptions } from './render.js'
export { remarkCmsSource, rehypeCmsSource, type CmsSourceOptions } from './editable-blocks.js'
export { sourceHash, parseSourceHint, formatSourceHint } from './source-hint.js'
export { sanitizeInlineHtml } from './inline-sanitize.js'
export { applyBlockEdit } from './block-edit.js'
export { SourceMismatchError, UneditableBlockError } from './text-edit.js'
export {
  isMarkdownDraft, mergeMarkdownDraft, emptyMarkdownDraft, recordMarkdownEdit, mapBaseRange,
  type MarkdownDraft
} from './markdown-draft.js'
