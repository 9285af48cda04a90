/**
 * `bodyChunks`: a Markdown body split, by a string scan and no parse, into top-level chunks that
 * CommonMark parses the same alone as inside the whole body.
 *
 * A chunk starts at the first line, or at a line that starts in column 0, follows a blank line and
 * does not start a list item, provided no fenced code block or HTML block of types 1-5 is open
 * there. Such a line closes every container (a list item needs indentation, a block quote its `>`,
 * nothing is a lazy continuation after a blank line), so only those leaf blocks can run across it.
 *
 * Whether a fence or an HTML block is open depends on containers the scan does not parse: an
 * indented fence may sit in a list item (and end with it) or at the top level; a `<div>` line may
 * start an HTML block (whose lines are not fences) or continue a paragraph. The scan keeps every
 * reading it cannot rule out, each as its own state, and starts a chunk only where all of them
 * agree that nothing is open: more readings only make chunks bigger.
 */

/** One chunk: `body.slice(start, end)`; the chunks cover the body in order. */
export interface BodyChunk {
  start: number
  end: number
}

/**
 * One reading of what is open: nothing, a fence (closed by `char` repeated `length` times), an HTML
 * block of types 1-5 (closed by a line containing `close`) or of types 6-7 (closed by a blank line).
 * `indent` is 0 for a block at the top level, else the content indentation of the list item that
 * holds it: a non-blank line indented less closes the item, and the block with it.
 */
type OpenBlock =
  | { kind: 'none' }
  | { kind: 'fence', char: string, length: number, indent: number }
  | { kind: 'html', close: string, indent: number }
  | { kind: 'html-blank', indent: number }

const NONE: OpenBlock = { kind: 'none' }
const LIST_ITEM = /^([-+*]|\d{1,9}[.)])([ \t]|$)/
const BLANK = /^[ \t]*$/
const FENCE = /^(`{3,}|~{3,})(.*)$/
const HTML_CLOSE: Array<[RegExp, string]> = [
  [/^<(script|pre|style|textarea)([ \t>]|$)/i, '</'],
  [/^<!--/, '-->'],
  [/^<\?/, '?>'],
  [/^<![A-Za-z]/, '>'],
  [/^<!\[CDATA\[/, ']]>']
]
/** What may start a fence, an HTML block or a list item (whose content may be one of those). */
const OPENERS = /^[`~<\-+*0-9]/
const ITEM_START = /^([-+*]|\d{1,9}[.)])([ \t]+)/
const TYPE1_END = /<\/(script|pre|style|textarea)>/i

/**
 * Splits a body into top-level chunks.
 * @param body the Markdown body (LF or CRLF)
 * @returns the chunks, in order, covering the body
 */
export function bodyChunks (body: string): BodyChunk[] {
  const chunks: BodyChunk[] = []
  let chunkStart = 0
  let states: OpenBlock[] = [NONE]
  let previousBlank = false
  let offset = 0
  while (offset < body.length) {
    const newline = body.indexOf('\n', offset)
    const next = newline === -1 ? body.length : newline + 1
    const line = body.slice(offset, newline === -1 ? body.length : newline).replace(/\r$/, '')
    const blank = BLANK.test(line)
    if (offset > 0 && previousBlank && !blank && line[0] !== ' ' && line[0] !== '\t' && !LIST_ITEM.test(line)) {
      // Column 0 closes list items (and what they hold) before the line is read.
      states = unique(states.map(s => s.kind !== 'none' && s.indent > 0 ? NONE : s))
      if (states.every(s => s.kind === 'none')) {
        chunks.push({ start: chunkStart, end: offset })
        chunkStart = offset
        states = [NONE]
      }
    }
    states = states.length === 1 && states[0] === NONE && blank
      ? states
      : unique(states.flatMap(s => advance(s, line, blank)))
    previousBlank = blank
    offset = next
  }
  if (chunkStart < body.length || chunks.length === 0) chunks.push({ start: chunkStart, end: body.length })
  return chunks
}

/** The readings after one more line. */
function advance (state: OpenBlock, line: string, blank: boolean): OpenBlock[] {
  const indent = indentOf(line)
  if (state.kind !== 'none' && state.indent > 0 && !blank && indent < state.indent) state = NONE
  switch (state.kind) {
    case 'fence': {
      const rest = line.replace(/^[ \t]+/, '')
      const closes = indent - state.indent <= 3 && rest.startsWith(state.char.repeat(state.length)) &&
        (state.char === '`' ? /^`+[ \t]*$/ : /^~+[ \t]*$/).test(rest)
      return [closes ? NONE : state]
    }
    case 'html':
      return [htmlEnds(state.close, line) ? NONE : state]
    case 'html-blank':
      return [blank ? NONE : state]
    default:
      return opened(line, indent)
  }
}

/** The readings of a line read with nothing open: the blocks it may open, at each possible depth. */
function opened (line: string, indent: number): OpenBlock[] {
  const rest = line.replace(/^[ \t]+/, '')
  if (!OPENERS.test(rest)) return [NONE]
  // The list-item content indentations the line may sit in (with at most 3 spaces of its own).
  const depths: number[] = indent <= 3 ? [0] : [NONE_DEPTH]
  for (let c = Math.max(2, indent - 3); c <= indent; c++) depths.push(c)
  return openers(rest, indent, depths)
}

/**
 * The readings of `text`, starting at `column`, as a block start at each of `depths` (NONE_DEPTH:
 * as no block start at all).
 */
function openers (text: string, column: number, depths: number[]): OpenBlock[] {
  const item = ITEM_START.exec(text)
  if (item !== null) {
    // A list item's first line: its content, 1 to 4 columns after the marker, may open a block
    // inside the item (more columns make it indented code, read here as a block too: harmless).
    const marker = column + (item[1] ?? '').length
    const gap = (item[2] ?? ' ').replace(/\t/g, '    ').length
    const inner: number[] = []
    for (let c = marker + 1; c <= marker + gap; c++) inner.push(c)
    return [NONE, ...openers(text.slice(item[0].length), marker + gap, inner)]
  }
  const fence = FENCE.exec(text)
  if (fence !== null) {
    const marks = fence[1] ?? ''
    const char = marks[0] ?? '`'
    if (char === '`' && (fence[2] ?? '').includes('`')) return [NONE]
    return depths.map(d => d === NONE_DEPTH ? NONE : { kind: 'fence', char, length: marks.length, indent: d })
  }
  const html = HTML_CLOSE.find(([start]) => start.test(text))
  if (html !== undefined) {
    const [start, close] = html
    const opener = start.exec(text)?.[0] ?? ''
    const endsIn = (line: string): boolean => htmlEnds(close, line)
    if (endsIn(text.slice(opener.length))) return [NONE]
    const open = depths.map((d): OpenBlock => d === NONE_DEPTH ? NONE : { kind: 'html', close, indent: d })
    // An end marker overlapping the start (`<?>`, `<!-->`): parsers differ, keep both readings.
    return endsIn(text) ? [NONE, ...open] : open
  }
  if (/^<[A-Za-z/]/.test(text)) {
    // Types 6 and 7 end at a blank line; type 7 cannot interrupt a paragraph, so it may be text.
    return [NONE, ...depths.filter(d => d !== NONE_DEPTH).map((d): OpenBlock => ({ kind: 'html-blank', indent: d }))]
  }
  return [NONE]
}

/**
 * Whether a line ends an HTML block of types 1-5 (`close`: its end marker). As micromark reads
 * them: a CDATA section ends at `]]>` read as pairs of `]` (so `]]]>` does not end it, `]]]]>`
 * does), the others where the marker occurs.
 */
function htmlEnds (close: string, line: string): boolean {
  if (close === '</') return TYPE1_END.test(line)
  if (close !== ']]>') return line.includes(close)
  let brackets = 0
  for (const c of line) {
    if (c === '>' && brackets === 2) return true
    brackets = c !== ']' ? 0 : brackets === 1 ? 2 : 1
  }
  return false
}

/** Marks "indented code or content of something else": the line opens nothing. */
const NONE_DEPTH = -1

/** The visual indentation of a line (tabs to the next multiple of 4). */
function indentOf (line: string): number {
  let width = 0
  for (const ch of line) {
    if (ch === ' ') width++
    else if (ch === '\t') width += 4 - (width % 4)
    else break
  }
  return width
}

function unique (states: OpenBlock[]): OpenBlock[] {
  if (states.length < 2) return states
  const seen = new Map<string, OpenBlock>()
  for (const s of states) seen.set(JSON.stringify(s), s)
  return [...seen.values()]
}
