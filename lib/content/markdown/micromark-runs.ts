/**
 * micromark's trees of the runs of a body markdown-it may read otherwise (markdown-it-outline.ts),
 * parsed in groups of a few KB with the link definitions each names written after it; a group naming
 * a footnote another group defines is parsed again with that definition.
 */
import type { Root, RootContent } from 'mdast'
import { visit } from 'unist-util-visit'
import { shiftPositions, definitionsNamedIn, normalizeLabel, writtenDefinition, type BodyParser, type NamedDefinition } from './parse-body.js'

/** A run: body offsets, from a line's start to a line's end. */
export interface Run { start: number, end: number }

/** The parsers: of a text of a few KB, and of a longer one. */
export interface RunParsers { whole: BodyParser, long: BodyParser }

/** Between two runs: an HTML block at column 0 after a blank line ends every block before it. */
const SEPARATOR = '\n\n<!-- -->\n\n'
/** The characters a group gathers before it is parsed. */
const GROUP_CHARS = 8000

interface Group { text: string, runs: Array<{ run: Run, at: number }>, footnotes: Map<string, string>, tree: Root }

/**
 * Parses the runs.
 * @param runs the runs, in body order
 * @param body the body
 * @param definitions the body's link definitions
 * @param parsers micromark's parsers
 * @returns each run's tree (positions in body offsets), or null when a node reaches past its run
 */
export function parseRuns (runs: Run[], body: string, definitions: NamedDefinition[], parsers: RunParsers): Root[] | null {
  const groups: Group[] = []
  for (const run of runs) {
    let group = groups[groups.length - 1]
    if (group === undefined || group.text.length >= GROUP_CHARS) {
      group = { text: '', runs: [], footnotes: new Map(), tree: { type: 'root', children: [] } }
      groups.push(group)
    } else {
      group.text += SEPARATOR
    }
    group.runs.push({ run, at: group.text.length })
    group.text += body.slice(run.start, run.end)
  }
  for (const group of groups) {
    group.tree = parseGroup(group.text, definitionsNamedIn(group.text, definitions), parsers)
    group.footnotes = footnotesOf(group.tree, group.text)
  }
  for (const group of groups) {
    const wanted = footnotesNamed(group, groups)
    if (wanted.length > 0) group.tree = parseGroup(group.text, [...definitionsNamedIn(group.text, definitions), ...wanted], parsers)
  }
  const out: Root[] = []
  for (const group of groups) {
    const trees = split(group)
    if (trees === null) return null
    out.push(...trees)
  }
  return out
}

function parseGroup (text: string, trailer: string[], parsers: RunParsers): Root {
  const whole = trailer.length === 0 ? text : text + SEPARATOR + trailer.join('\n\n')
  return whole.length > 4 * GROUP_CHARS ? parsers.long(whole) : parsers.whole(whole)
}

/** The group's tree cut into its runs' trees, positions moved to body offsets. */
function split (group: Group): Root[] | null {
  const trees: Root[] = group.runs.map(() => ({ type: 'root', children: [] }))
  let index = 0
  for (const child of group.tree.children) {
    const from = child.position?.start.offset ?? 0
    const to = child.position?.end.offset ?? 0
    while (index < group.runs.length && from >= runEnd(group, index)) index++
    const part = group.runs[index]
    if (part === undefined || from < part.at) continue
    if (to > runEnd(group, index)) return null
    shiftPositions(child as RootContent, part.run.start - part.at)
    trees[index]?.children.push(child)
  }
  return trees
}

function runEnd (group: Group, index: number): number {
  const part = group.runs[index]
  return part === undefined ? Infinity : part.at + part.run.end - part.run.start
}

/** The footnotes a tree defines: identifier -> a one-line definition with the label as the source writes it. */
function footnotesOf (tree: Root, text: string): Map<string, string> {
  const out = new Map<string, string>()
  visit(tree, 'footnoteDefinition', (node) => { out.set(node.identifier, writtenDefinition(node, text)) })
  return out
}

/** The definitions of the footnotes a group names that only other groups define. */
function footnotesNamed (group: Group, groups: Group[]): string[] {
  if (!group.text.includes('[^')) return []
  const lines = new Set<string>()
  for (const match of group.text.matchAll(/\[\^((?:[^\\[\]]|\\[^]){1,999})\]/g)) {
    const key = normalizeLabel(match[1] as string)
    if (group.footnotes.has(key)) continue
    for (const other of groups) {
      const line = other.footnotes.get(key)
      if (line !== undefined) { lines.add(line); break }
    }
  }
  return [...lines]
}
