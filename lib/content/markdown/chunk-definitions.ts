/**
 * The link and footnote definitions of a body, found chunk by chunk (see body-chunks.ts), and the
 * ones a chunk may use. A chunk parses alone as inside the body once the body's definitions are
 * known: they decide which brackets are links and which `[^x]` are footnote calls. So a chunk is
 * parsed after a short text that defines, the same way, every label it may refer to.
 */
import type { RootContent } from 'mdast'

/** One definition of a body, with the text that defines its label alone. */
export interface ChunkDefinition {
  kind: 'definition' | 'footnoteDefinition'
  /** The label as the parser compares labels (micromark's `normalizeIdentifier`), kind first. */
  key: string
  /** The words of the normalized label: a chunk referring to it contains each one (normalized). */
  words: string[]
  /**
   * Text defining the label the same way: a link definition's own source (it is at the top level,
   * so its source stands alone), for a footnote its label and a one-letter note (the note itself is
   * rendered in the footnotes section, never in place).
   */
  stub: string
}

/**
 * The label normalization of CommonMark as micromark implements it (`normalizeIdentifier`).
 * @param label the label's source
 * @returns the normalized label
 */
export function normalizeLabel (label: string): string {
  return label.replace(/[\t\n\r ]+/g, ' ').replace(/^ | $/g, '').toLowerCase().toUpperCase()
}

/**
 * The definitions of one chunk, in order.
 * @param nodes the chunk's top-level nodes, parsed alone (their definitions do not depend on any
 *   other definition, so a parse of the chunk among others without definitions gives them)
 * @param source the text the nodes' offsets point into
 * @returns the definitions, or null when one is not at the top level (in a block quote, list item
 *   or footnote, where its source does not stand alone) or its label cannot be found
 */
export function chunkDefinitions (nodes: RootContent[], source: string): ChunkDefinition[] | null {
  const out: ChunkDefinition[] = []
  for (const node of nodes) {
    if (node.type !== 'definition' && node.type !== 'footnoteDefinition') {
      if (containsDefinition(node)) return null
      continue
    }
    const start = node.position?.start.offset
    const end = node.position?.end.offset
    if (start === undefined || end === undefined) return null
    if (node.type === 'footnoteDefinition' && node.children.some(containsDefinition)) return null
    const open = node.type === 'definition' ? '[' : '[^'
    const from = source.indexOf(open, start)
    if (from === -1 || from >= end || source.slice(start, from).trim() !== '') return null
    const labelEnd = closingBracket(source, from + open.length, end)
    if (labelEnd === -1) return null
    const label = source.slice(from + open.length, labelEnd)
    const normalized = normalizeLabel(label)
    out.push({
      kind: node.type,
      key: (node.type === 'definition' ? 'l' : 'f') + normalized,
      words: normalized.split(' ').filter(w => w !== ''),
      stub: node.type === 'definition' ? source.slice(start, end) : `[^${label}]: x`
    })
  }
  return out
}

/**
 * The definitions among `definitions` (the body's, in document order, first of each label only)
 * that a text may refer to: those whose every label word occurs in it. A reference's label is in
 * the text word for word (a line break inside it may add a container marker, never split a word),
 * and normalizing the whole text keeps each word's normalization, so none is missed.
 * @param text the chunk text
 * @param definitions the candidate definitions
 * @returns the ones to parse in front of the text, in document order
 */
export function definitionsUsable (text: string, definitions: ChunkDefinition[]): ChunkDefinition[] {
  if (definitions.length === 0 || !text.includes('[') || !text.includes(']')) return []
  const normalized = text.toLowerCase().toUpperCase()
  return definitions.filter(d => d.words.every(w => normalized.includes(w)))
}

/** Whether a node holds a definition at any depth. */
function containsDefinition (node: object): boolean {
  const n = node as { type?: string, children?: object[] }
  if (n.type === 'definition' || n.type === 'footnoteDefinition') return true
  return n.children?.some(containsDefinition) ?? false
}

/** The index of the first `]` not escaped by a backslash, from `from` to `end`, or -1. */
function closingBracket (text: string, from: number, end: number): number {
  for (let i = from; i < end; i++) {
    const c = text[i]
    if (c === '\\') i++
    else if (c === ']') return i
  }
  return -1
}
