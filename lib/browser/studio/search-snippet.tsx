/** Where a search matched an entry: the field's name and its excerpt, the query's words marked. */
import type { JSX } from 'preact'
import type { Snippet } from './api.js'

/** The snippet line of a listed entry (elements built by Preact: the excerpt is text, never HTML). */
export function SearchSnippet ({ snippet }: { snippet: Snippet }): JSX.Element {
  const parts: Array<string | JSX.Element> = []
  let at = 0
  snippet.marks.forEach(([start, end], i) => {
    if (start < at || end > snippet.text.length) return
    parts.push(snippet.text.slice(at, start), <mark key={i}>{snippet.text.slice(start, end)}</mark>)
    at = end
  })
  parts.push(snippet.text.slice(at))
  return <p class="snippet"><span class="snippet-field">{snippet.field}:</span> {parts}</p>
}
