/**
 * micromark's trees of the runs of a body markdown-it may read otherwise (markdown-it-outline.ts):
 * the runs are parsed as one text, apart from each other, with the link definitions they name
 * written after them; in regions of a few KB (parseInRegions carries definitions between them).
 */
import type { Root, RootContent } from 'mdast'
import { parseInRegions, shiftPositions, definitionsNamedIn, type BodyParser, type NamedDefinition } from './parse-body.js'

/** A run: body offsets, from a line's start to a line's end. */
export interface Run { start: number, end: number }

/** Between two runs: an HTML block at column 0 after a blank line ends every block before it. */
const SEPARATOR = '\n\n<!-- -->\n\n'
/** The characters a region of the text holds at least (parseInRegions). */
const REGION_CHARS = 8000

/**
 * Parses the runs.
 * @param runs the runs, in body order
 * @param body the body
 * @param definitions the body's link definitions
 * @param parse the parser of a whole text
 * @returns each run's tree (positions in body offsets), or null when a node reaches past its run
 */
export function parseRuns (runs: Run[], body: string, definitions: NamedDefinition[], parse: BodyParser): Root[] | null {
  const parts: Array<{ run: Run, at: number }> = []
  let text = ''
  for (const run of runs) {
    if (parts.length > 0) text += SEPARATOR
    parts.push({ run, at: text.length })
    text += body.slice(run.start, run.end)
  }
  const trailer = definitionsNamedIn(text, definitions)
  const tree = parseInRegions(trailer.length === 0 ? text : text + SEPARATOR + trailer.join('\n\n'), parse, REGION_CHARS)
  const trees: Root[] = parts.map(() => ({ type: 'root', children: [] }))
  const partEnd = (index: number): number => {
    const part = parts[index]
    return part === undefined ? Infinity : part.at + part.run.end - part.run.start
  }
  let index = 0
  for (const child of tree.children) {
    const from = child.position?.start.offset ?? 0
    const to = child.position?.end.offset ?? 0
    while (index < parts.length && from >= partEnd(index)) index++
    const part = parts[index]
    if (part === undefined || from < part.at) continue
    if (to > partEnd(index)) return null
    shiftPositions(child as RootContent, part.run.start - part.at)
    trees[index]?.children.push(child)
  }
  return trees
}
