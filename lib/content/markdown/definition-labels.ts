/**
 * Link and footnote definitions written next to Markdown that is parsed apart from its body
 * (body-regions.ts, region-parse.ts, micromark-runs.ts), so that its references resolve as they do
 * in the whole body.
 */
import type { Definition, FootnoteDefinition } from 'mdast'

/** A definition's normalized label and a one-line definition of that label. */
export interface NamedDefinition { identifier: string, line: string }

/** A label as mdast normalizes an identifier: whitespace collapsed and trimmed, case folded. */
export function normalizeLabel (text: string): string {
  return text.replace(/[\t\n\r ]+/g, ' ').replace(/^ | $/g, '').toLowerCase().toUpperCase().toLowerCase()
}

/** The one-line definitions whose labels a text may name (its normalized text holds the label), each once. */
export function definitionsNamedIn (text: string, definitions: NamedDefinition[]): string[] {
  if (definitions.length === 0) return []
  const normalized = normalizeLabel(text)
  const lines = new Set<string>()
  for (const definition of definitions) if (normalized.includes(definition.identifier)) lines.add(definition.line)
  return [...lines]
}

/** A one-line definition of a node's label as the source writes it: `[label]: #` or `[^label]: x`. */
export function writtenDefinition (node: Definition | FootnoteDefinition, text: string): string {
  const footnote = node.type === 'footnoteDefinition'
  const open = (node.position?.start.offset ?? 0) + (footnote ? 2 : 1)
  const label = /^(?:[^\\[\]]|\\[^])*/.exec(text.slice(open, open + 1000))?.[0] ?? ''
  return footnote ? `[^${label}]: x` : `[${label}]: #`
}
